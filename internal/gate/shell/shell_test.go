package shell_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/gate/shell"
)

// render writes effects one a line, for rows to compare: "W rm: db/x db/y"
// (a pattern's path as glob:db/*), "R <: list", "U rm: <why>". Reads are
// left out unless reads is set: a read-only command may or may not report
// them.
func render(es []shell.Effect, reads bool) []string {
	out := []string{}
	for _, e := range es {
		switch e.Kind {
		case shell.Read:
			if !reads {
				continue
			}
			out = append(out, "R "+e.Command+": "+paths(e.Paths))
		case shell.Write:
			out = append(out, "W "+e.Command+": "+paths(e.Paths))
		case shell.Undecidable:
			out = append(out, "U "+e.Command+": "+e.Why)
		default:
			out = append(out, fmt.Sprintf("kind %d", e.Kind))
		}
	}
	return out
}

func paths(ps []shell.Path) string {
	var s []string
	for _, p := range ps {
		if p.Glob {
			s = append(s, "glob:"+p.Name)
			continue
		}
		s = append(s, p.Name)
	}
	return strings.Join(s, " ")
}

// The lines rows expect.
func w(command string, ps ...string) string { return "W " + command + ": " + strings.Join(ps, " ") }
func r(command string, ps ...string) string { return "R " + command + ": " + strings.Join(ps, " ") }
func u(command, why string) string          { return "U " + command + ": " + why }

// scripts is an Options.Script that knows the scripts of the map.
func scripts(m map[string]string) func(string) (string, bool) {
	return func(p string) (string, bool) {
		s, ok := m[p]
		return s, ok
	}
}

var (
	home = shell.Options{Home: "/home/u"}
	none = []string{}
)

const (
	whyHome    = "~ is the agent's home directory, which Madebook cannot know here"
	whyEval    = "eval runs a string as a command"
	whySubst   = "the path is built by $(…)"
	whyXargs   = "xargs takes its arguments from its input"
	whyEnvX    = "it expands the variable $X, which comes from the environment"
	whyCdX     = "the directory cd changed to comes from $X"
	whyAwk     = "awk's program writes files or runs commands"
	whyStdin   = "it runs shell commands from its input"
	whyTooBig  = "the command is too large to analyze"
	whyTooDeep = "it nests shells, scripts, eval or functions more than 8 deep"
)

type row struct {
	cmd   string
	o     shell.Options
	want  []string
	reads bool // compare the Read effects too
}

// rows are the rules of the analyzer, one (or a few) rows each.
var rows = map[string][]row{
	"a redirection writes its target, relative to where cd went": {
		{cmd: `cd db && echo x > migrations/3.sql`, want: []string{w(">", "db/migrations/3.sql")}},
	},
	"every redirection that writes writes; < reads": {
		{cmd: `echo hi >| db/x`, want: []string{w(">|", "db/x")}},
		{cmd: `echo hi &> db/x`, want: []string{w("&>", "db/x")}},
		{cmd: `echo hi &>> db/x`, want: []string{w("&>>", "db/x")}},
		{cmd: `echo hi 2> db/x`, want: []string{w("2>", "db/x")}},
		{cmd: `cat <> db/x`, want: []string{w("<>", "db/x")}},
		{cmd: `echo hi >> db/x`, want: []string{w(">>", "db/x")}},
		{cmd: `echo hi >& db/x`, want: []string{w(">&", "db/x")}},
		{cmd: `cat < db/x`, want: []string{r("<", "db/x")}, reads: true},
		{cmd: `exec 3> db/log`, want: []string{w("3>", "db/log")}},
	},
	"copies of descriptors and devices are no files": {
		{cmd: `echo hi > /dev/null 2>&1`, want: none},
		{cmd: `echo hi >&2`, want: none},
		{cmd: `echo hi 2>/dev/stderr 1>/dev/stdout </dev/tty`, want: none},
		{cmd: `echo hi > /dev/fd/3 3>&-`, want: none},
		{cmd: `cd /dev && echo hi > null`, want: none},
	},
	"here-documents and here-strings touch nothing, but their substitutions run": {
		{cmd: "cat <<EOF\nhello\nEOF", want: none},
		{cmd: "cat <<EOF > db/x\nhello $(rm web/y)\nEOF", want: []string{w("rm", "web/y"), w(">", "db/x")}},
		{cmd: "cat <<'EOF'\n$(rm web/y)\nEOF", want: none},
		{cmd: `grep x <<< "$(rm db/x)"`, want: []string{w("rm", "db/x")}},
	},
	"a loop's variable takes each word of its list, a pattern staying a pattern": {
		{cmd: `for d in db/mig*; do touch $d/7.sql; done`, want: []string{w("touch", "glob:db/mig*/7.sql")}},
		{cmd: `for d in a b; do touch "$d/x"; done`, want: []string{w("touch", "a/x", "b/x")}},
		{cmd: `for f in db/*.sql; do mv "$f" "${f%.sql}.bak"; done`, want: []string{w("mv", "glob:db/*.sql", "glob:db/*.bak")}},
		{cmd: `for f in $(ls); do rm $f; done`, want: []string{u("rm", whySubst)}},
		{cmd: `for d in a b; do cd $d; rm x; cd ..; done; rm y`, want: []string{w("rm", "a/x", "b/x"), w("rm", "y")}},
		{cmd: `for f in a b; do cp x $f; done`, want: []string{w("cp", "a", "b")}},
		{cmd: `select x in a b; do rm $x; done`, want: []string{w("rm", "a", "b")}},
		{cmd: `for x in $(seq 1 100); do rm "f$x"; done`, want: []string{u("rm", whySubst)}},
		{cmd: `for x in {1..65}; do rm "f$x"; done`, want: []string{u("rm", "it expands the variable $x, which a loop gives more than 64 values")}},
		{cmd: `for i in 1 2 3; do x=$x/a; done; rm $x`, want: []string{u("rm", "it expands the variable $x, which comes from the environment")}},
		{cmd: `x=a; for i in 1 2; do x=$x/a; rm $x; done`, want: []string{
			w("rm", "a/a"), w("rm", "a/a", "a/a/a"), w("rm", "a/a", "a/a/a", "a/a/a/a"),
			u("rm", "it expands the variable $x, which changes with each pass of a loop")}},
		{cmd: `for ((i=0;i<3;i++)); do touch f$i; done`, want: []string{u("touch", "it expands the variable $i, which arithmetic computes")}},
		{cmd: `for x; do rm $x; done`, want: []string{u("rm", "it expands $@, the arguments, which Madebook cannot see")}},
	},
	"rm, mv and the other writers write their operands": {
		{cmd: `rm -rf db`, want: []string{w("rm", "db")}},
		{cmd: `mv db old_db`, want: []string{w("mv", "db", "old_db")}},
		{cmd: `mv -t db a b`, want: []string{w("mv", "a", "b", "db")}},
		{cmd: `touch -r ref db/x`, want: []string{r("touch", "ref"), w("touch", "db/x")}, reads: true},
		{cmd: `mkdir -p -m 755 db/a`, want: []string{w("mkdir", "db/a")}},
		{cmd: `rmdir db/a; unlink db/b; shred -n 3 -u db/c`, want: []string{w("rmdir", "db/a"), w("unlink", "db/b"), w("shred", "db/c")}},
		{cmd: `truncate -s 0 db/x`, want: []string{w("truncate", "db/x")}},
		{cmd: `setfacl -m u:x:r db/x`, want: []string{w("setfacl", "db/x")}},
		{cmd: `rm -- -rf`, want: []string{w("rm", "-rf")}},
		{cmd: `rm db -rf`, want: []string{w("rm", "db")}},
		{cmd: `rm -rf /`, want: []string{w("rm", "/")}},
		{cmd: `rm -rf .`, want: []string{w("rm", ".")}},
		{cmd: `rm ""`, want: none},
	},
	"quotes and escapes are removed": {
		{cmd: `rm "db"/migrations/x.sql`, want: []string{w("rm", "db/migrations/x.sql")}},
		{cmd: `rm db\/migrations/x.sql`, want: []string{w("rm", "db/migrations/x.sql")}},
		{cmd: `rm 'db'/"migrations"/x.sql`, want: []string{w("rm", "db/migrations/x.sql")}},
		{cmd: `rm $'db/x\ty'`, want: []string{w("rm", "db/x\ty")}},
		{cmd: `rm "a b" c\ d`, want: []string{w("rm", "a b", "c d")}},
	},
	"an unquoted metacharacter makes a pattern; a quoted one is literal": {
		{cmd: `rm 'db/mig*'`, want: []string{w("rm", "db/mig*")}},
		{cmd: `rm db/mig*`, want: []string{w("rm", "glob:db/mig*")}},
		{cmd: `rm db/mig\*`, want: []string{w("rm", "db/mig*")}},
		{cmd: `rm 'a*'b*`, want: []string{w("rm", `glob:a\*b*`)}},
		{cmd: `rm db/x?.sql db/[ab].sql`, want: []string{w("rm", "glob:db/x?.sql", "glob:db/[ab].sql")}},
		{cmd: `rm x[`, want: []string{w("rm", "x[")}},
		{cmd: `rm db/@(a|b).sql`, want: []string{w("rm", "glob:db/*.sql")}},
	},
	"braces expand": {
		{cmd: `touch db/{a,b}`, want: []string{w("touch", "db/a", "db/b")}},
		{cmd: `mkdir -p db/{a,b}/c`, want: []string{w("mkdir", "db/a/c", "db/b/c")}},
		{cmd: `cp db/x{,.bak}`, want: []string{w("cp", "db/x.bak")}},
		{cmd: `touch f{1..3}`, want: []string{w("touch", "f1", "f2", "f3")}},
		{cmd: `touch '{a,b}'`, want: []string{w("touch", "{a,b}")}},
		{cmd: `touch {1..100}{1..100}{1..100}`, want: []string{u("touch", "the word expands to too many paths")}},
	},
	"sort -o writes its output file, glued or not": {
		{cmd: `sort -odb/migrations/x.sql web/a`, want: []string{w("sort -o", "db/migrations/x.sql")}},
		{cmd: `sort --output=db/x web/a`, want: []string{w("sort -o", "db/x")}},
		{cmd: `sort --output db/x web/a`, want: []string{w("sort -o", "db/x")}},
		{cmd: `sort -k 2 -t, web/a`, want: none},
		{cmd: `uniq web/a db/x`, want: []string{w("uniq", "db/x")}},
		{cmd: `uniq -c web/a`, want: none},
	},
	"~ and $HOME expand from Options.Home, else are undecidable": {
		{cmd: `rm ~/repo/db/migrations/x.sql`, o: home, want: []string{w("rm", "/home/u/repo/db/migrations/x.sql")}},
		{cmd: `rm ~/repo/db/migrations/x.sql`, want: []string{u("rm", whyHome)}},
		{cmd: `rm $HOME/x`, o: home, want: []string{w("rm", "/home/u/x")}},
		{cmd: `rm "$HOME/x"`, want: []string{u("rm", "$HOME is the agent's home directory, which Madebook cannot know here")}},
		{cmd: `cd && rm x`, o: home, want: []string{w("rm", "/home/u/x")}},
		{cmd: `cd ~ && rm x`, want: []string{u("rm", "the directory cd changed to comes from ~")}},
		{cmd: `cd && rm x`, want: []string{u("rm", "the directory cd changed to is the agent's home directory, which Madebook cannot know here")}},
		{cmd: `rm ~bob/x`, o: home, want: []string{u("rm", "~bob is the home directory of another user, which Madebook cannot know here")}},
		{cmd: `HOME=/h; rm ~/x`, want: []string{w("rm", "/h/x")}},
		{cmd: `echo ~ $HOME`, want: none},
	},
	"relative paths stay relative to the start directory": {
		{cmd: `rm ../repo/db/migrations/x.sql`, want: []string{w("rm", "../repo/db/migrations/x.sql")}},
		{cmd: `rm ./db//x/../y`, want: []string{w("rm", "db/y")}},
		{cmd: `cd .. && rm x`, want: []string{w("rm", "../x")}},
	},
	"cd, pushd and popd are followed": {
		{cmd: `cd db && rm x`, want: []string{w("rm", "db/x")}},
		{cmd: `cd /abs && rm x`, want: []string{w("rm", "/abs/x")}},
		{cmd: `cd db; cd ..; rm x`, want: []string{w("rm", "x")}},
		{cmd: `cd db; cd -; rm x`, want: []string{w("rm", "x")}},
		{cmd: `cd -; rm x`, want: []string{u("rm", "cd - returns to $OLDPWD, which comes from the environment")}},
		{cmd: `cd $X && rm y`, want: []string{u("rm", whyCdX)}},
		{cmd: `cd $X && rm /abs/y`, want: []string{w("rm", "/abs/y")}},
		{cmd: `cd "$(git rev-parse --show-toplevel)" && rm x`, want: []string{u("rm", "the directory cd changed to comes from $(…)")}},
		{cmd: `cd $(pwd)/db && rm x`, want: []string{w("rm", "db/x")}},
		{cmd: `pushd db; rm x; popd; rm y`, want: []string{w("rm", "db/x"), w("rm", "y")}},
		{cmd: `pushd db >/dev/null && pushd web && popd && rm x`, want: []string{w("rm", "db/x")}},
		{cmd: `(cd db; rm x); rm y`, want: []string{w("rm", "db/x"), w("rm", "y")}},
		{cmd: `cd db | rm x`, want: []string{w("rm", "x")}},
		{cmd: `cd db & rm x`, want: []string{w("rm", "x")}},
		{cmd: `f() { cd db; }; f; rm x`, want: []string{w("rm", "db/x")}},
	},
	"after branches that cd differently, a path is in each directory": {
		{cmd: `[ -d db ] && cd db; rm x`, want: []string{w("rm", "db/x", "x")}},
		{cmd: `cd db || exit 1; rm x`, want: []string{w("rm", "db/x")}},
		{cmd: `cd db || { echo no; exit 1; }; rm x`, want: []string{w("rm", "db/x")}},
		{cmd: `if [ -d db ]; then cd db; else cd web; fi; rm x`, want: []string{w("rm", "db/x", "web/x")}},
		{cmd: `if x; then cd db; fi; rm y`, want: []string{w("rm", "db/y", "y")}},
		{cmd: `if cd db; then rm x; else rm y; fi`, want: []string{w("rm", "db/x"), w("rm", "y")}},
		{cmd: `cd db && rm x || rm y`, want: []string{w("rm", "db/x"), w("rm", "y", "db/y")}},
		{cmd: `case $a in x) cd db;; *) cd web;; esac; rm y`, want: []string{w("rm", "db/y", "web/y")}},
		{cmd: `while x; do cd sub; done; rm y`, want: []string{u("rm", "the directory changes with each pass of a loop")}},
	},
	"git: read-only subcommands write nothing": {
		{cmd: `git diff`, want: none},
		{cmd: `git status`, want: none},
		{cmd: `git log --oneline -n 5 | head`, want: none},
		{cmd: `git --no-pager show HEAD:db/x`, want: none},
		{cmd: `git -C db blame x`, want: none},
		{cmd: `git config --get user.name`, want: none},
		{cmd: `git config --list`, want: none},
		{cmd: `git remote -v`, want: none},
		{cmd: `git branch`, want: none},
		{cmd: `git branch -a --list 'f*'`, want: none},
		{cmd: `git tag -l`, want: none},
		{cmd: `git stash list`, want: none},
		{cmd: `git reflog`, want: none},
		{cmd: `git clean -n`, want: none},
		{cmd: `git diff --output=db/x`, want: []string{w("git diff --output", "db/x")}},
	},
	"git: subcommands that change the whole tree write .": {
		{cmd: `git checkout -- .`, want: []string{w("git checkout", ".")}},
		{cmd: `git checkout .`, want: []string{w("git checkout", ".")}},
		{cmd: `git checkout main`, want: []string{w("git checkout", ".")}},
		{cmd: `git reset --hard`, want: []string{w("git reset", ".")}},
		{cmd: `git clean -fd`, want: []string{w("git clean", ".")}},
		{cmd: `git stash`, want: []string{w("git stash", ".")}},
		{cmd: `git stash pop`, want: []string{w("git stash", ".")}},
		{cmd: `git pull`, want: []string{w("git pull", ".")}},
		{cmd: `git switch -c x`, want: []string{w("git switch", ".")}},
		{cmd: `git merge x && git rebase main`, want: []string{w("git merge", "."), w("git rebase", ".")}},
		{cmd: `git am x.patch; git apply x.patch; git cherry-pick abc; git revert abc`,
			want: []string{w("git am", "."), w("git apply", "."), w("git cherry-pick", "."), w("git revert", ".")}},
		{cmd: `git apply --check x.patch`, want: none},
		{cmd: `git -C db checkout .`, want: []string{w("git checkout", "db")}},
		{cmd: `cd web && git -C ../db reset --hard`, want: []string{w("git reset", "db")}},
		{cmd: `git -c core.x=y --git-dir=.git --no-pager pull`, want: []string{w("git pull", ".")}},
		{cmd: `git --work-tree=db checkout main`, want: []string{w("git checkout", "db")}},
	},
	"git: other subcommands write their path operands": {
		{cmd: `git checkout -- db/x web/y`, want: []string{w("git checkout", "db/x", "web/y")}},
		{cmd: `git checkout main -- db/x`, want: []string{w("git checkout", "db/x")}},
		{cmd: `git restore db/x`, want: []string{w("git restore", "db/x")}},
		{cmd: `git restore -s HEAD~1 db/x`, want: []string{w("git restore", "db/x")}},
		{cmd: `git add db/x`, want: []string{w("git add", "db/x")}},
		{cmd: `git rm -r db`, want: []string{w("git rm", "db")}},
		{cmd: `git mv a b`, want: []string{w("git mv", "a", "b")}},
		{cmd: `git commit -m "fix db" -- db/x`, want: []string{w("git commit", "db/x")}},
		{cmd: `git commit -am "fix db"`, want: none},
		{cmd: `git clean -fd db`, want: []string{w("git clean", "db")}},
		{cmd: `git clone https://e.x/r.git db/r`, want: []string{w("git clone", "db/r")}},
		{cmd: `git $SUB`, want: []string{u("git", "it expands the variable $SUB, which comes from the environment")}},
	},
	"read-only commands write nothing, and neither does a pipeline of them": {
		{cmd: `cat db/migrations/x.sql`, want: none},
		{cmd: `ls -la db`, want: none},
		{cmd: `grep -r foo db | head`, want: none},
		{cmd: `find db -name '*.sql'`, want: none},
		{cmd: `find . -type f -newer x -name '-delete'`, want: none},
		{cmd: `cat $F | wc -l; echo $HOME; stat "$(which go)"`, want: none},
		{cmd: `jq . db/x | tee /dev/null`, want: none},
		{cmd: `diff <(ls a) <(ls b)`, want: none},
		{cmd: `[[ -f db/x ]] && test -d db && [ -n "$X" ]`, want: none},
		{cmd: `env`, want: none},
		{cmd: `command -v rm`, want: none},
		{cmd: `type rm; which rm; printf '%s\n' x`, want: none},
		{cmd: `awk '{print $1}' db/x`, want: none},
		{cmd: `sed s/a/b/ db/x`, want: none},
		{cmd: `sed -e 's/a/b/' -e '1d' -n db/x`, want: none},
		{cmd: `sed "s/foo/$BAR/" db/x`, want: none},
		{cmd: `git diff | grep x | sort | uniq -c | head`, want: none},
	},
	"a pipeline's writers still write": {
		{cmd: `cat db/x | grep y > out.txt`, want: []string{w(">", "out.txt")}},
		{cmd: `echo x | tee db/x`, want: []string{w("tee", "db/x")}},
		{cmd: `echo x | tee -a db/x web/y`, want: []string{w("tee", "db/x", "web/y")}},
	},
	"a command Madebook does not know writes its operands and option values": {
		{cmd: `make test`, want: []string{w("make", "test")}},
		{cmd: `go build ./...`, want: []string{w("go", "build", "...")}},
		{cmd: `cd web && go test ./... 2>&1 | tail -20`, want: []string{w("go", "web/test", "web/...")}},
		{cmd: `npm run build -- --out-dir=dist`, want: []string{w("npm", "run", "build", "--out-dir=dist")}},
		{cmd: `tool --config=db/c.yaml -odb/out -v x`, want: []string{w("tool", "db/c.yaml", "db/out", "x")}},
		{cmd: `go test -count=1 ./x`, want: []string{w("go", "test", "1", "x")}},
		{cmd: `docker pull https://e.x/img`, want: []string{w("docker", "pull")}},
		{cmd: `make $TARGET`, want: []string{u("make", "it expands the variable $TARGET, which comes from the environment")}},
		{cmd: `$CMD x`, want: []string{u("$CMD", "it expands the variable $CMD, which comes from the environment")}},
		{cmd: `$(echo rm) x`, want: []string{u("$(…)", whySubst)}},
		{cmd: `./node_modules/.bin/*`, want: []string{u("./node_modules/.bin/*", "the command name is a pattern, which Madebook cannot resolve")}},
	},
	"sh -c and its like analyze their string, with the directory": {
		{cmd: `bash -c 'rm db/x'`, want: []string{w("rm", "db/x")}},
		{cmd: `sh -c "cd db; rm x"`, want: []string{w("rm", "db/x")}},
		{cmd: `cd db && zsh -ec 'rm x'`, want: []string{w("rm", "db/x")}},
		{cmd: `dash -c 'rm $1' sh db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `sh -c "cd db" && rm x`, want: []string{w("rm", "x")}},
		{cmd: `bash -c "$CMD"`, want: []string{u("bash -c", "it expands the variable $CMD, which comes from the environment")}},
		{cmd: `bash -c 'echo "unterminated'`, want: []string{u("", "the string bash -c runs does not parse: 1:6: reached EOF without closing quote `\"`")}},
		{cmd: "bash <<'EOF'\nrm db/x\nEOF", want: []string{w("rm", "db/x")}},
		{cmd: `curl -sSL https://e.x | sh`, want: []string{u("sh", whyStdin)}},
	},
	"variables: literal ones expand, the environment's are undecidable": {
		{cmd: `D=db; rm -r $D/migrations`, want: []string{w("rm", "db/migrations")}},
		{cmd: `D=db; rm $D/x`, want: []string{w("rm", "db/x")}},
		{cmd: `rm $X/y`, want: []string{u("rm", whyEnvX)}},
		{cmd: `D=db rm $D/x`, want: []string{u("rm", "it expands the variable $D, which comes from the environment")}},
		{cmd: `D="a b"; rm $D; rm "$D"`, want: []string{w("rm", "a", "b"), w("rm", "a b")}},
		{cmd: `D='db/*'; rm $D; rm "$D"`, want: []string{w("rm", "glob:db/*"), w("rm", "db/*")}},
		{cmd: `export D=db; readonly E=web; rm $D $E`, want: []string{w("rm", "db", "web")}},
		{cmd: `D=db; D+=/x; rm $D`, want: []string{w("rm", "db/x")}},
		{cmd: `X=db; rm ${X:-web}/x; Y=; rm ${Y:-web}/x`, want: []string{w("rm", "db/x"), w("rm", "web/x")}},
		{cmd: `rm ${X:-db}/x`, want: []string{u("rm", whyEnvX)}},
		{cmd: `f=db/x.sql; mv $f ${f%.sql}.bak ${f##*/}`, want: []string{w("mv", "db/x.sql", "db/x.bak", "x.sql")}},
		{cmd: `rm ${#X}`, want: []string{u("rm", "it expands ${#X}, which Madebook does not evaluate")}},
		{cmd: `rm $PWD/x; cd db; rm "$PWD"/y`, want: []string{w("rm", "x"), w("rm", "db/y")}},
		{cmd: `rm $1`, want: []string{u("rm", "it expands $1, an argument Madebook cannot see")}},
		{cmd: `set -- db/x db/y; rm "$@"`, want: []string{w("rm", "db/x", "db/y")}},
		{cmd: `read -r D; rm $D/x`, want: []string{u("rm", "it expands the variable $D, which read takes from the input")}},
		{cmd: `ls | while read f; do rm "$f"; done`, want: []string{u("rm", "it expands the variable $f, which read takes from the input")}},
		{cmd: `if x; then D=db; fi; rm $D/x`, want: []string{w("rm", "db/x"), u("rm", "it expands the variable $D, which comes from the environment")}},
		{cmd: `if x; then D=db; else D=web; fi; rm $D/x`, want: []string{w("rm", "db/x", "web/x")}},
		{cmd: `unset D; rm "$D"x`, want: []string{w("rm", "x")}},
		{cmd: `D=db; bash -c 'rm $D/x'`, want: []string{w("rm", "db/x", "/x")}},
		{cmd: `export D=db; bash -c 'rm $D/x'`, want: []string{w("rm", "db/x")}},
		{cmd: `D=db bash -c 'rm $D/x'`, want: []string{w("rm", "db/x")}},
		{cmd: `rm $((1+2))`, want: []string{u("rm", "the path is built by $((…))")}},
	},
	"command substitutions: their commands are analyzed, their output undecidable": {
		{cmd: `rm $(cat list)`, want: []string{u("rm", whySubst)}},
		{cmd: "rm `cat list`", want: []string{u("rm", "the path is built by `…`")}},
		{cmd: `echo $(rm db/x)`, want: []string{w("rm", "db/x")}},
		{cmd: "echo `rm db/x`", want: []string{w("rm", "db/x")}},
		{cmd: `x=$(rm db/x)`, want: []string{w("rm", "db/x")}},
		{cmd: `cat <(rm db/x) >(tee web/y)`, want: []string{w("rm", "db/x"), w("tee", "web/y")}},
		{cmd: `echo "$(cd db; rm x)"; rm y`, want: []string{w("rm", "db/x"), w("rm", "y")}},
		{cmd: `[[ -f $(rm db/x) ]]`, want: []string{w("rm", "db/x")}},
		{cmd: `echo ${X:-$(rm db/x)}`, want: []string{w("rm", "db/x")}},
	},
	"eval and trap analyze their string; one Madebook cannot tell is undecidable": {
		{cmd: `eval "$CMD"`, want: []string{u("eval", whyEval)}},
		{cmd: `eval rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `eval "cd db; rm x"; rm y`, want: []string{w("rm", "db/x"), w("rm", "db/y")}},
		{cmd: `trap 'rm -f db/x' EXIT`, want: []string{w("rm", "db/x")}},
		{cmd: `trap - EXIT; trap '' INT`, want: none},
		{cmd: `trap "$X" EXIT`, want: []string{u("trap", "trap runs a string as a command that Madebook cannot tell")}},
	},
	"xargs is undecidable unless the command it runs only reads": {
		{cmd: `xargs rm < list`, want: []string{u("xargs rm", whyXargs)}},
		{cmd: `find . -name x | xargs grep y`, want: none},
		{cmd: `find . -name x -print0 | xargs -0 -n1 sed -n 1p`, want: none},
		{cmd: `ls | xargs sed -i s/a/b/`, want: []string{u("xargs sed", whyXargs)}},
		{cmd: `ls | xargs sudo rm`, want: []string{u("xargs sudo", whyXargs)}},
		{cmd: `ls | xargs -I{} sh -c 'rm {}'`, want: []string{u("xargs sh", whyXargs)}},
		{cmd: `ls | xargs`, want: none},
	},
	"find: -delete and -exec write its start paths": {
		{cmd: `find db -delete`, want: []string{w("find -delete", "db")}},
		{cmd: `find db -name x -exec rm {} \;`, want: []string{w("find -exec", "db"), w("rm", "db")}},
		{cmd: `find db web -type f -execdir chmod 644 {} +`, want: []string{w("find -execdir", "db", "web"), w("chmod", "db"), w("chmod", "web")}},
		{cmd: `find -name x -delete`, want: []string{w("find -delete", ".")}},
		{cmd: `find . -name '*.go' -exec grep -l foo {} +`, want: none},
		{cmd: `find db -fprint out.txt`, want: []string{w("find -fprint", "out.txt")}},
		{cmd: `find -L db -ok mv {} {}.bak \;`, want: []string{w("find -ok", "db"), w("mv", "db", "db.bak")}},
	},
	"sed -i, sed's w and perl -i write; sed's e is undecidable": {
		{cmd: `sed -i s/a/b/ db/x`, want: []string{w("sed -i", "db/x")}},
		{cmd: `sed -i.bak -e s/a/b/ db/x web/y`, want: []string{w("sed -i", "db/x", "web/y")}},
		{cmd: `sed --in-place 's/a/b/' db/x`, want: []string{w("sed -i", "db/x")}},
		{cmd: `sed -n '/x/w out.txt' db/x`, want: []string{w("sed w", "out.txt")}},
		{cmd: `sed 's/a/b/gw out.txt' db/x`, want: []string{w("sed w", "out.txt")}},
		{cmd: `sed '1e ls' db/x`, want: []string{u("sed e", "sed's script runs commands (e)")}},
		{cmd: `sed --sandbox 's/a/b/w x' db/x`, want: none},
		{cmd: `perl -pi -e s/a/b/ db/x`, want: []string{w("perl -i", "db/x")}},
		{cmd: `perl -i.bak -pe 's/a/b/' db/x`, want: []string{w("perl -i", "db/x")}},
		{cmd: `perl -ne 'print if /x/' db/x`, want: none},
		{cmd: `ruby -pi -e 'gsub(/a/, "b")' db/x`, want: []string{w("ruby -i", "db/x")}},
	},
	"awk: a program that may write or run is undecidable": {
		{cmd: `awk '{print > "out"}' db/x`, want: []string{u("awk", whyAwk)}},
		{cmd: `awk '{system("rm x")}' db/x`, want: []string{u("awk", whyAwk)}},
		{cmd: `awk '{print | "sh"}' db/x`, want: []string{u("awk", whyAwk)}},
		{cmd: `awk '$1 == 1 || $2 == 2' db/x`, want: none},
		{cmd: `awk -F: -v x=1 '{print $x}' db/x`, want: none},
		{cmd: `gawk -i inplace '{print}' db/x`, want: []string{w("gawk -i inplace", "db/x")}},
		{cmd: `awk -f prog.awk db/x`, want: []string{u("awk -f", "it runs the awk program prog.awk, which Madebook cannot read here")}},
	},
	"dd, tee, cp, install, rsync, scp and ln write their destinations": {
		{cmd: `dd if=a of=db/x bs=1M`, want: []string{r("dd", "a"), w("dd", "db/x")}, reads: true},
		{cmd: `tee db/x`, want: []string{w("tee", "db/x")}},
		{cmd: `tee -a db/x`, want: []string{w("tee", "db/x")}},
		{cmd: `cp web/a db/x`, want: []string{w("cp", "db/x")}},
		{cmd: `cp db/x web/a`, want: []string{r("cp", "db/x"), w("cp", "web/a")}, reads: true},
		{cmd: `cp -t db web/a`, want: []string{r("cp", "web/a"), w("cp", "db")}, reads: true},
		{cmd: `cp --target-directory=db web/a web/b`, want: []string{w("cp", "db")}},
		{cmd: `cp -r src/* dst/`, want: []string{r("cp", "glob:src/*"), w("cp", "dst")}, reads: true},
		{cmd: `install -m 755 a db/bin`, want: []string{w("install", "db/bin")}},
		{cmd: `install -d db/a db/b`, want: []string{w("install", "db/a", "db/b")}},
		{cmd: `rsync -av --delete src/ dst/`, want: []string{w("rsync", "dst")}},
		{cmd: `rsync -av src/ host:dst/`, want: none},
		{cmd: `rsync -e ssh -av host:src/ db/`, want: []string{w("rsync", "db")}},
		{cmd: `scp -P 22 host:x db/x`, want: []string{w("scp", "db/x")}},
		{cmd: `ln -s ../x db/link`, want: []string{w("ln", "db/link")}},
		{cmd: `ln -sf /x/y`, want: []string{w("ln", "y")}},
		{cmd: `ln -t db a b`, want: []string{w("ln", "db")}},
	},
	"chmod, chown and chgrp write the files after the mode or owner": {
		{cmd: `chmod +x db/x`, want: []string{w("chmod", "db/x")}},
		{cmd: `chmod -x db/x`, want: []string{w("chmod", "db/x")}},
		{cmd: `chmod -R 755 db web`, want: []string{w("chmod", "db", "web")}},
		{cmd: `chmod --reference=a db/x`, want: []string{w("chmod", "db/x")}},
		{cmd: `chown -R u:g db`, want: []string{w("chown", "db")}},
		{cmd: `chgrp staff db/x`, want: []string{w("chgrp", "db/x")}},
	},
	"tar, unzip and patch write where they extract or patch": {
		{cmd: `tar xzf a.tgz`, want: []string{w("tar -x", ".")}},
		{cmd: `tar -C db -xf a.tar`, want: []string{w("tar -x", "db")}},
		{cmd: `tar --extract --file=a.tar --directory=db`, want: []string{w("tar -x", "db")}},
		{cmd: `cd web && tar xf a.tar -C ../db`, want: []string{w("tar -x", "db")}},
		{cmd: `tar czf db/x.tgz src`, want: []string{w("tar -c", "db/x.tgz")}},
		{cmd: `tar -cf - src | ssh h tar xf -`, want: []string{w("ssh", "h", "tar", "xf")}},
		{cmd: `tar tf a.tar; tar -xOf a.tar x`, want: none},
		{cmd: `unzip a.zip -d db; unzip b.zip`, want: []string{w("unzip", "db"), w("unzip", ".")}},
		{cmd: `unzip -l a.zip`, want: none},
		{cmd: `patch -p1 < x.patch`, want: []string{w("patch", ".")}},
		{cmd: `patch -d db -p1 -i x.patch`, want: []string{w("patch", "db")}},
		{cmd: `patch db/x x.patch`, want: []string{w("patch", "db/x")}},
		{cmd: `patch --dry-run -p1 < x.patch`, want: none},
	},
	"curl and wget write what they download": {
		{cmd: `curl -o db/x https://e.x`, want: []string{w("curl -o", "db/x")}},
		{cmd: `curl -fsSLo db/x https://e.x`, want: []string{w("curl -o", "db/x")}},
		{cmd: `curl --output db/x https://e.x`, want: []string{w("curl -o", "db/x")}},
		{cmd: `curl -O https://e.x/a`, want: []string{w("curl -O", ".")}},
		{cmd: `curl -O --output-dir db https://e.x/a`, want: []string{w("curl -O", "db")}},
		{cmd: `curl -s -H 'x: y' https://e.x | jq .`, want: none},
		{cmd: `wget -O db/x https://e.x`, want: []string{w("wget -O", "db/x")}},
		{cmd: `wget -qO- https://e.x | jq .`, want: none},
		{cmd: `wget https://e.x/a`, want: []string{w("wget", ".")}},
		{cmd: `wget -P db https://e.x/a`, want: []string{w("wget", "db")}},
	},
	"wrappers are looked through": {
		{cmd: `sudo rm -rf db`, want: []string{w("rm", "db")}},
		{cmd: `sudo -u root -E rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `sudo -e db/x`, want: []string{w("sudo -e", "db/x")}},
		{cmd: `sudo -l`, want: none},
		{cmd: `env FOO=1 rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `env -i -u X FOO=1 BAR=2 rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `env -C db rm x`, want: []string{w("rm", "db/x")}},
		{cmd: `env D=db bash -c 'rm $D/x'`, want: []string{w("rm", "db/x")}},
		{cmd: `timeout 5 rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `timeout -s KILL 5m rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `nohup rm db/x &`, want: []string{w("rm", "db/x")}},
		{cmd: `nice -n 10 ionice -c 3 stdbuf -oL rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `time rm db/x; command rm db/y; builtin cd db; rm z`, want: []string{w("rm", "db/x"), w("rm", "db/y"), w("rm", "db/z")}},
		{cmd: `exec rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `chronic setsid caffeinate -i rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `/usr/bin/time -o db/t rm db/x`, want: []string{w("time", "db/t"), w("rm", "db/x")}},
		{cmd: `/usr/bin/rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `sudo`, want: none},
	},
	"compound commands are walked": {
		{cmd: `if true; then rm db/x; fi`, want: []string{w("rm", "db/x")}},
		{cmd: `if a; then :; elif b; then rm db/x; else rm db/y; fi`, want: []string{w("rm", "db/x"), w("rm", "db/y")}},
		{cmd: `while read l; do rm db/x; done < list`, want: []string{w("rm", "db/x")}},
		{cmd: `until false; do rm db/x; done`, want: []string{w("rm", "db/x")}},
		{cmd: `case $a in x) rm db/x;; esac`, want: []string{w("rm", "db/x")}},
		{cmd: `f() { rm db/x; }; f`, want: []string{w("rm", "db/x")}},
		{cmd: `f() { rm db/x; }`, want: []string{w("rm", "db/x")}},
		{cmd: `function f { rm "$1"; }; f db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `f() { g; }; g() { rm db/x; }; f`, want: []string{w("rm", "db/x")}},
		{cmd: `f() { f; }; f`, want: []string{u("f", whyTooDeep)}},
		{cmd: `{ rm db/x; } > log`, want: []string{w(">", "log"), w("rm", "db/x")}},
		{cmd: `! rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `coproc rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `(( i++ )); let x=1; rm f$i`, want: []string{u("rm", "it expands the variable $i, which arithmetic computes")}},
		{cmd: `exit 1; rm db/x`, want: []string{w("rm", "db/x")}},
		{cmd: `alias rmx='rm -rf'; rmx db`, want: []string{w("rm", "db")}},
		{cmd: `alias ls='ls -la'; ls db`, want: none},
	},
	"a script's text comes from Options.Script and is analyzed inline": {
		{cmd: `sh x.sh`, o: shell.Options{Script: scripts(map[string]string{"x.sh": "rm db/x"})}, want: []string{w("rm", "db/x")}},
		{cmd: `sh x.sh`, want: []string{u("sh", "it runs the script x.sh, which Madebook cannot read here")}},
		{cmd: `cd db && ./x.sh`, o: shell.Options{Script: scripts(map[string]string{"db/x.sh": "rm y"})}, want: []string{w("rm", "db/y")}},
		{cmd: `scripts/build.sh a`, o: shell.Options{Script: scripts(map[string]string{"scripts/build.sh": "#!/bin/bash\nrm -rf \"$1\""})}, want: []string{w("rm", "a")}},
		{cmd: `./x.py`, o: shell.Options{Script: scripts(map[string]string{"x.py": "#!/usr/bin/env python3\nprint(1)"})}, want: []string{u("./x.py", "it runs the script ./x.py, in another language")}},
		{cmd: `bash x.py`, o: shell.Options{Script: scripts(map[string]string{"x.py": "#!/usr/bin/env python3\nrm db/x"})}, want: []string{w("rm", "db/x")}},
		{cmd: `source env.sh && rm $D/x`, o: shell.Options{Script: scripts(map[string]string{"env.sh": "D=db; cd web"})}, want: []string{w("rm", "web/db/x")}},
		{cmd: `. ./env.sh; rm x`, o: shell.Options{Script: scripts(map[string]string{"env.sh": "cd db"})}, want: []string{w("rm", "db/x")}},
		{cmd: `bash x.sh; rm y`, o: shell.Options{Script: scripts(map[string]string{"x.sh": "cd db"})}, want: []string{w("rm", "y")}},
		{cmd: `/opt/x.sh`, o: shell.Options{Script: scripts(map[string]string{"/opt/x.sh": "rm /tmp/y"})}, want: []string{w("rm", "/tmp/y")}},
		{cmd: `./x.sh`, o: shell.Options{Script: scripts(map[string]string{"x.sh": "echo 'broken"})}, want: []string{u("", "the script ./x.sh does not parse: 1:6: reached EOF without closing quote `'`")}},
		{cmd: `./x.sh`, o: shell.Options{Script: scripts(map[string]string{"x.sh": "./x.sh"})}, want: []string{u("./x.sh", whyTooDeep)}},
		{cmd: `cd $X; ./x.sh`, o: shell.Options{Script: scripts(map[string]string{})}, want: []string{u("./x.sh", "the directory cd changed to comes from $X")}},
	},
	"interpreters: a code string writes its path-like tokens, a script is undecidable": {
		{cmd: `python -c "open('db/migrations/x.sql','w')"`, want: []string{w("python -c", "db/migrations/x.sql")}},
		{cmd: `python3 -c 'import shutil; shutil.rmtree("db")'`, want: []string{w("python3 -c", "db")}},
		// A code string's one-word literals are kept: 'db' is the
		// directory removed, and 'fs' names no file the caller guards.
		{cmd: `node -e "require('fs').rmSync('db',{recursive:true})"`, want: []string{w("node -e", "fs", "db")}},
		{cmd: `node --eval "fs.writeFileSync('web/x.json', s)"`, want: []string{w("node --eval", "web/x.json")}},
		{cmd: `cd web && node -p "require('./package.json').name"`, want: []string{w("node -p", "web/package.json")}},
		{cmd: `python -c 'print("hello world")'`, want: none},
		{cmd: `python -c "import os; os.remove('$F')"`, want: []string{u("python -c", "it expands the variable $F, which comes from the environment")}},
		{cmd: `python -c 'import sys; open(sys.argv[1], "w")' db/x`, want: []string{w("python -c", "db/x")}},
		{cmd: `python x.py`, want: []string{u("python", "it runs the script x.py, in another language")}},
		{cmd: `python3.12 -u x.py`, want: []string{u("python3.12", "it runs the script x.py, in another language")}},
		{cmd: `python -m pytest`, want: []string{u("python -m", "it runs the module pytest, in another language")}},
		{cmd: `python3`, want: []string{u("python3", "it runs python3 code from its input")}},
		{cmd: "python3 - <<'EOF'\nimport shutil\nshutil.rmtree(\"db/migrations\")\nEOF", want: []string{w("python3", "db/migrations")}},
		{cmd: `python3 --version; node -v`, want: none},
		{cmd: `node x.js`, want: []string{u("node", "it runs the script x.js, in another language")}},
		{cmd: `perl -e 'unlink "db/x"'`, want: []string{w("perl -e", "db/x")}},
		{cmd: `ruby -e 'File.write("db/x", "")'`, want: []string{w("ruby -e", "db/x")}},
		{cmd: `php -r 'unlink("db/x");'`, want: []string{w("php -r", "db/x")}},
		{cmd: `php artisan migrate`, want: []string{u("php", "it runs the script artisan, in another language")}},
		{cmd: `lua -e 'os.remove("db/x")'`, want: []string{w("lua -e", "db/x")}},
		{cmd: `Rscript -e 'file.remove("db/x")'`, want: []string{w("Rscript -e", "db/x")}},
		{cmd: `deno eval 'Deno.removeSync("db/x")'`, want: []string{w("deno eval", "db/x")}},
		{cmd: `deno run -A x.ts`, want: []string{u("deno run", "it runs the script x.ts, in another language")}},
		{cmd: `deno fmt src`, want: []string{w("deno", "fmt", "src")}},
		{cmd: `bun -e 'await Bun.write("db/x", "")'`, want: []string{w("bun -e", "db/x")}},
		{cmd: `bun x.ts`, want: []string{u("bun", "it runs the script x.ts, in another language")}},
		{cmd: `bun install`, want: []string{w("bun", "install")}},
		{cmd: `python -c 'open("~/x", "w")'`, o: home, want: []string{w("python -c", "/home/u/x")}},
		{cmd: `node -e 'fetch("https://e.x/a.json")'`, want: none},
	},
	"the command does not parse: undecidable": {
		{cmd: `echo 'unterminated`, want: []string{u("", "the command does not parse: 1:6: reached EOF without closing quote `'`")}},
		{cmd: `rm db/x; if; then`, want: []string{u("", "the command does not parse: 1:10: `if` must be followed by a statement list")}},
	},
}

func TestAnalyze(t *testing.T) {
	for rule, rs := range rows {
		for _, row := range rs {
			got := render(shell.Analyze(row.cmd, row.o), row.reads)
			if !slices.Equal(got, row.want) {
				t.Errorf("%s\n%s\n got: %q\nwant: %q", rule, row.cmd, got, row.want)
			}
		}
	}
}

// TestEffect compares a whole []Effect once, fields and all.
func TestEffect(t *testing.T) {
	got := shell.Analyze(`cd db && cp ../web/a 'x*' && rm -f mig*/x`, shell.Options{})
	want := []shell.Effect{
		{Kind: shell.Read, Command: "cp", Paths: []shell.Path{{Name: "web/a"}}},
		{Kind: shell.Write, Command: "cp", Paths: []shell.Path{{Name: "db/x*"}}},
		{Kind: shell.Write, Command: "rm", Paths: []shell.Path{{Name: "db/mig*/x", Glob: true}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestScriptPath checks the path Options.Script is asked with: the
// script's name joined with the directory it runs in.
func TestScriptPath(t *testing.T) {
	var asked []string
	o := shell.Options{Script: func(p string) (string, bool) {
		asked = append(asked, p)
		return "", true
	}}
	shell.Analyze(`cd db; ./a.sh; bash ../b.sh; source c.sh; . /abs/d.sh; cd /x && sh e.sh`, o)
	want := []string{"db/a.sh", "b.sh", "db/c.sh", "/abs/d.sh", "/x/e.sh"}
	if !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}

// TestLimits checks the bounds: a command too long, too many effects, too
// deep a nesting.
func TestLimits(t *testing.T) {
	long := strings.Repeat("x", 100_001)
	if got := render(shell.Analyze(long, shell.Options{}), false); !slices.Equal(got, []string{u("", "the command is too long to analyze (more than 100000 bytes)")}) {
		t.Errorf("a long command: %q", got)
	}
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "rm f%d; ", i)
	}
	es := shell.Analyze(b.String(), shell.Options{})
	if len(es) != shell.MaxEffects || es[len(es)-1].Why != whyTooBig || es[0].Paths[0].Name != "f0" {
		t.Errorf("2000 writes: %d effects, the last %+v", len(es), es[len(es)-1])
	}
	nested := "rm db/x"
	for range 9 {
		nested = "sh -c " + shellQuote(nested)
	}
	if got := render(shell.Analyze(nested, shell.Options{}), false); !slices.Equal(got, []string{u("sh", whyTooDeep)}) {
		t.Errorf("9 nested sh -c: %q", got)
	}
	nested = "rm db/x"
	for range 7 {
		nested = "sh -c " + shellQuote(nested)
	}
	if got := render(shell.Analyze(nested, shell.Options{}), false); !slices.Equal(got, []string{w("rm", "db/x")}) {
		t.Errorf("7 nested sh -c: %q", got)
	}
	// Work: a loop over functions that each call the next twice.
	var f strings.Builder
	for i := range 30 {
		fmt.Fprintf(&f, "f%d() { f%d; f%d; }; ", i, i+1, i+1)
	}
	f.WriteString("f30() { rm x; }; f0")
	es = shell.Analyze(f.String(), shell.Options{})
	if len(es) == 0 || len(es) > shell.MaxEffects {
		t.Errorf("doubling functions: %d effects", len(es))
	}
}

// TestHostile checks that commands built to be slow are not: each one's
// analysis takes milliseconds. The bound is far above that, so that a
// busy machine under the race detector passes, and far below what an
// analysis that blew up would take.
func TestHostile(t *testing.T) {
	many := func(s string, n int) string { return strings.Repeat(s, n) }
	cmds := map[string]string{
		"a variable that doubles":     "a=1; " + many("a=$a$a; ", 40) + "rm $a",
		"suffix removal with stars":   "a=x; " + many("a=$a$a; ", 12) + "rm ${a%%" + many("*x", 30) + "y}",
		"brackets that close nothing": "rm " + many("[", 90_000),
		"a long code string":          "python -c '" + many("open(\"a/b\"); ", 6_000) + "'",
		"a long sed script":           "sed '" + many("s/a/b/;", 12_000) + "' x",
		"nested loops that cd":        many("for d in a b c; do cd $d; ", 20) + "rm x" + many("; done", 20),
		"functions that double": func() string {
			var b strings.Builder
			for i := range 40 {
				fmt.Fprintf(&b, "f%d() { f%d; f%d; }; ", i, i+1, i+1)
			}
			return b.String() + "f0"
		}(),
		"many operands":               "rm " + many("a/b/c ", 15_000),
		"deep substitutions":          many("$(", 3_000) + "rm x" + many(")", 3_000),
		"a long pipeline":             many("cat x | ", 10_000) + "rm y",
		"brace products":              "touch " + many("{a,b,c,d}", 40),
		"a variable of many values":   many("if x; then a=$a/1; else a=$a/2; fi; ", 30) + "rm $a",
		"scripts that run themselves": "./x.sh; ./x.sh; ./x.sh",
	}
	for what, cmd := range cmds {
		o := shell.Options{Script: func(string) (string, bool) { return cmd, true }}
		start := time.Now()
		es := shell.Analyze(cmd, o)
		d := time.Since(start)
		if d > 10*time.Second {
			t.Errorf("%s: %v", what, d)
		}
		t.Logf("%s: %v, %d effects", what, d, len(es))
		if len(es) > shell.MaxEffects {
			t.Errorf("%s: %d effects", what, len(es))
		}
	}
}

// shellQuote quotes s for the shell, in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestKindString(t *testing.T) {
	for k, want := range map[shell.Kind]string{shell.Read: "read", shell.Write: "write", shell.Undecidable: "undecidable", 9: "Kind(9)"} {
		if k.String() != want {
			t.Errorf("%d: %q", k, k.String())
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		shell.Analyze(`cd web && go test ./... 2>&1 | tail -20`, shell.Options{})
	}
}

// TestConcurrent analyzes from several goroutines at once, for the race
// detector: the parsers are pooled, the tables only read.
func TestConcurrent(t *testing.T) {
	var cmds []string
	for _, rs := range rows {
		for _, r := range rs {
			cmds = append(cmds, r.cmd)
		}
	}
	want := make([]string, len(cmds))
	for i, c := range cmds {
		want[i] = fmt.Sprint(shell.Analyze(c, home))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range cmds {
				k := (i + g*7) % len(cmds)
				if got := fmt.Sprint(shell.Analyze(cmds[k], home)); got != want[k] {
					t.Errorf("%s: %s, alone %s", cmds[k], got, want[k])
				}
			}
		})
	}
	wg.Wait()
}
