package shell

import "sync"

// The tables below are all Madebook knows of commands. A command in none
// of them is one Madebook does not know: it writes every path it names
// (see analyzer.unknown). Each is built on first use (sync.OnceValue), not
// at start: the Claude Code hook, a process started on every tool call,
// links this package but analyzes no shell for most calls.

// readOnly are the commands that only read, whatever their arguments:
// their arguments are never paths they write, so they make no effect (a
// redirection on them still does). A pipeline of them is read-only as a
// whole.
var readOnly = lazySet(
	// Reading files.
	"cat", "tac", "less", "more", "head", "tail", "nl", "od", "hexdump", "strings", "file", "stat", "wc",
	"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "shasum", "md5",
	// Listing and searching.
	"ls", "ll", "la", "dir", "du", "df", "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "locate",
	// Comparing.
	"diff", "cmp", "comm",
	// Filtering text from files or input to output.
	"cut", "tr", "fold", "column", "paste", "join", "expand", "unexpand", "fmt", "rev", "jq",
	// Printing.
	"echo", "printf", "pwd", "true", "false", ":", "test", "[", "seq", "yes", "sleep", "date", "cal", "expr", "bc",
	// Naming and resolving.
	"which", "type", "whereis", "basename", "dirname", "realpath", "readlink", "hash",
	// The system and the user.
	"whoami", "id", "groups", "uname", "hostname", "ps", "pgrep", "uptime", "nproc", "free", "arch", "tty",
	"locale", "getconf", "printenv", "lsof", "man", "help", "info",
	// Shell builtins that change no file.
	"break", "continue", "wait", "jobs", "bg", "fg", "kill", "umask", "ulimit", "shopt", "times", "disown",
	"suspend", "logout", "caller", "complete", "compgen", "compopt", "enable", "dirs", "unalias", "bind",
	"history", "local", "declare", "typeset", "readonly", "export", "let",
)

// conditional are the commands that only read unless an option or an
// operand says otherwise; each has its own rule (analyzer.conditional):
// sort -o FILE, uniq's second operand, sed -i and sed's w command, awk
// programs that print to files or run commands (and gawk -i inplace), find
// with -delete, -exec and their like, git subcommands that change the
// tree, yq -i, tree -o, base64 -o, xxd's second operand.
var conditional = lazySet("sort", "uniq", "sed", "gsed", "awk", "gawk", "mawk", "nawk", "find", "gfind", "git", "yq", "tree", "base64", "xxd")

// builtins are the shell builtins that change the shell itself (its
// directory, its variables) or run commands it is given as text.
var builtins = sync.OnceValue(func() map[string]builtin {
	return map[string]builtin{
		"cd": bCd, "pushd": bPushd, "popd": bPopd,
		"eval": bEval, "trap": bTrap, "source": bSource, ".": bSource, "alias": bAlias,
		"read": bRead, "mapfile": bMapfile, "readarray": bMapfile, "getopts": bGetopts,
		"unset": bUnset, "shift": bShift, "set": bSet, "exit": bExit, "return": bExit, "printf": bPrintf,
	}
})

type builtin uint8

const (
	bCd builtin = iota + 1
	bPushd
	bPopd
	bEval
	bTrap
	bSource
	bAlias
	bRead
	bMapfile
	bGetopts
	bUnset
	bShift
	bSet
	bExit
	bPrintf
)

// wrappers are the commands that run the command their operands name,
// which is analyzed in their place. (xargs, which runs its command with
// arguments it reads, has a rule of its own: analyzer.xargs.) The options say which of their own
// options take a value; their options end at the first operand.
var wrappers = sync.OnceValue(func() map[string]wrapper {
	return map[string]wrapper{
		"sudo": {opts: optSpec{short: "CDgprRtTUu", long: list("close-from chdir group prompt chroot role type command-timeout other-user user host")},
			dir: list("-D --chdir"), noCmd: list("-l --list -V --version -v --validate -K --remove-timestamp"),
			edit: list("-e --edit"), shell: list("-s --shell -i --login")},
		"doas": {opts: optSpec{short: "uC"}, shell: list("-s")},
		"env": {opts: optSpec{short: "uCSPa", long: list("unset chdir split-string argv0")}, dir: list("-C --chdir"),
			split: list("-S --split-string"), assigns: true},
		"nice":       {opts: optSpec{short: "n", long: list("adjustment")}},
		"nohup":      {},
		"time":       {opts: optSpec{short: "fo", long: list("format output")}, out: list("-o --output")},
		"timeout":    {opts: optSpec{short: "sk", long: list("signal kill-after")}, skip: 1},
		"command":    {noCmd: list("-v -V")},
		"builtin":    {},
		"exec":       {opts: optSpec{short: "a"}, ends: true},
		"stdbuf":     {opts: optSpec{short: "ioe", long: list("input output error")}},
		"ionice":     {opts: optSpec{short: "cnpPu", long: list("class classdata pid pgid uid")}, noCmd: list("-p -P -u --pid --pgid --uid")},
		"chronic":    {},
		"setsid":     {},
		"caffeinate": {opts: optSpec{short: "tw"}},
	}
})

// wrapper is how a wrapper's arguments read.
type wrapper struct {
	opts optSpec
	// dir are the options whose value is the directory the command runs in.
	dir []string
	// noCmd are the options after which the operands are no command (the
	// wrapper prints or lists): the whole is read-only.
	noCmd []string
	// edit are the options that make the operands files the wrapper
	// edits (sudo -e).
	edit []string
	// shell are the options that, without operands, run a shell that
	// reads commands from the input.
	shell []string
	// split are the options whose value is split into a command line
	// (env -S), which Madebook does not follow.
	split []string
	// out are the options whose value is a file the wrapper writes.
	out []string
	// skip is how many operands come before the command (timeout's
	// duration).
	skip int
	// assigns: operands of the form NAME=value before the command are
	// assignments it runs with (env).
	assigns bool
	// ends: the shell ends with the command (exec).
	ends bool
}

// writers are the commands that write the paths they name; rule says
// which of their operands and option values those are.
var writers = sync.OnceValue(func() map[string]writer {
	return map[string]writer{
		// Every operand is written (created, changed or removed).
		"rm":       {rule: rOperands},
		"rmdir":    {rule: rOperands},
		"unlink":   {rule: rOperands},
		"shred":    {rule: rOperands, opts: optSpec{short: "ns", long: list("iterations size random-source")}},
		"touch":    {rule: rOperands, opts: optSpec{short: "dtr", long: list("date reference time")}, reads: list("-r --reference")},
		"mkdir":    {rule: rOperands, opts: optSpec{short: "m", long: list("mode context")}},
		"mkfifo":   {rule: rOperands, opts: optSpec{short: "m", long: list("mode context")}},
		"truncate": {rule: rOperands, opts: optSpec{short: "sr", long: list("size reference")}, reads: list("-r --reference")},
		"tee":      {rule: rOperands},
		"setfacl": {rule: rOperands, opts: optSpec{short: "mxMX", long: list("modify remove set modify-file remove-file set-file")},
			reads: list("-M -X --modify-file --remove-file --set-file")},
		// Every operand is written: moving a file out of a place deletes it
		// there. -t names the directory moved into.
		"mv": {rule: rOperands, opts: optSpec{short: "tS", long: list("target-directory suffix")}, writes: list("-t --target-directory")},
		// The last operand (or -t's directory) is written, the others read.
		"cp":      {rule: rCopy, opts: optSpec{short: "tS", long: list("target-directory suffix")}, writes: list("-t --target-directory")},
		"install": {rule: rCopy, opts: optSpec{short: "tSmog", long: list("target-directory suffix mode owner group strip-program")}, writes: list("-t --target-directory")},
		"rsync": {rule: rCopy, opts: optSpec{short: "eTfB", long: list("rsh rsync-path exclude include exclude-from include-from files-from filter temp-dir partial-dir log-file port password-file chmod chown backup-dir suffix compare-dest copy-dest link-dest timeout contimeout bwlimit max-size min-size info debug out-format block-size")},
			writes: list("--log-file")},
		"scp": {rule: rCopy, opts: optSpec{short: "cFiJlmoPSDX"}},
		// The link (the last operand, or -t's directory) is written.
		"ln": {rule: rLink, opts: optSpec{short: "tS", long: list("target-directory suffix")}, writes: list("-t --target-directory")},
		// The first operand is a mode or an owner; the others are written.
		"chmod": {rule: rMode},
		"chown": {rule: rOwner, opts: optSpec{long: list("reference from")}},
		"chgrp": {rule: rOwner, opts: optSpec{long: list("reference from")}},
		// Rules of their own.
		"dd":     {rule: rDd},
		"tar":    {rule: rTar},
		"gtar":   {rule: rTar},
		"bsdtar": {rule: rTar},
		"unzip":  {rule: rUnzip},
		"patch":  {rule: rPatch},
		"curl":   {rule: rCurl},
		"wget":   {rule: rWget},
	}
})

// writer is how a writer's arguments read.
type writer struct {
	rule rule
	opts optSpec
	// writes and reads are the options whose value is a path the command
	// writes, or reads.
	writes, reads []string
}

type rule uint8

const (
	rOperands rule = iota + 1
	rCopy
	rLink
	rMode
	rOwner
	rDd
	rTar
	rUnzip
	rPatch
	rCurl
	rWget
)

// shells are the shells: sh -c STR runs STR, sh x.sh runs the script x.sh,
// and sh alone runs what it reads.
var shells = lazySet("sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash")

// interpreters are the interpreters of other languages. Run with a code
// string, they write every path-like token of the string (see codeTokens)
// and every argument after it; run with a script, or with code from the
// input Madebook cannot read, they are undecidable.
var interpreters = sync.OnceValue(func() map[string]interp {
	pythonInterp := interp{code: "c", module: "m", values: "WXQ", info: list("-V --version -h --help")}
	nodeInterp := interp{code: "ep", long: list("eval print"), values: "rC", longValues: list("require import loader experimental-loader title conditions"),
		info: list("-v --version -h --help")}
	return map[string]interp{
		"python":  pythonInterp,
		"python2": pythonInterp,
		"python3": pythonInterp,
		"pypy":    pythonInterp,
		"pypy3":   pythonInterp,
		"node":    nodeInterp,
		"nodejs":  nodeInterp,
		"perl":    {code: "eE", inplace: "i", glued: "IMmxdDCF", digits: "l0", loops: "np", info: list("-v -V --version --help")},
		"ruby":    {code: "e", inplace: "i", values: "CEFIr", glued: "xWT", digits: "0", loops: "np", info: list("-v --version -h --help")},
		"php":     {code: "rBRE", script: "fF", values: "dczt", server: "S", info: list("-v --version -h --help -i --info -m --modules -l --syntax-check")},
		"lua":     {code: "e", values: "l", info: list("-v")},
		"luajit":  {code: "e", values: "lj", info: list("-v")},
		"Rscript": {code: "e", info: list("--version --help")},
		"deno":    {code: "", subcommands: true, info: list("-V --version -h --help")},
		"bun":     {code: "ep", long: list("eval print"), subcommands: true, info: list("-v --version -h --help")},
	}
})

// interp is how an interpreter's arguments read.
type interp struct {
	// code are the short options whose value is code (python's -c); long
	// the long ones (node's --eval).
	code string
	long []string
	// module are the short options whose value is a module it runs
	// (python -m); script those whose value is a script (php -f).
	module, script string
	// values are the other short options that take a value, glued or
	// apart; glued those whose value can only be glued; digits those
	// followed by digits (perl -l0); longValues the long options that take
	// a value.
	values, glued, digits string
	longValues            []string
	// inplace is the short option that edits the files in place, with a
	// glued suffix (perl -i.bak).
	inplace string
	// loops are the short options that loop over the input files (perl -n
	// and -p): without in-place editing, those files are read.
	loops string
	// server are the short options that start a server (php -S).
	server string
	// info are the options that only print (a version, a help).
	info []string
	// subcommands: the first operand may be a subcommand (deno eval, bun
	// run); one it does not run code with is as a command Madebook does
	// not know.
	subcommands bool
}

// binDirs are the directories whose commands are known by their base name
// (/usr/bin/rm is rm); any other command word with a slash is a script.
var binDirs = lazySet("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin")

// devices are the files writing to (or reading from) touches no file.
var devices = lazySet("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom")

// gitReadOnly are the git subcommands that only read (git diff --output
// FILE still writes FILE).
var gitReadOnly = lazySet("status", "diff", "log", "show", "blame", "annotate", "grep", "rev-parse", "ls-files", "ls-tree",
	"cat-file", "describe", "shortlog", "show-ref", "rev-list", "name-rev", "merge-base", "for-each-ref", "whatchanged",
	"count-objects", "check-ignore", "check-attr", "var", "ls-remote", "help", "version", "cherry", "range-diff",
	"diff-tree", "diff-index", "diff-files", "verify-commit", "verify-tag", "show-branch", "fsck", "format-patch")

// gitTree are the git subcommands that change the working tree as a whole,
// without naming paths: they write "." (in git's -C directory).
var gitTree = lazySet("switch", "merge", "rebase", "pull", "am", "cherry-pick", "revert")

// gitOpts are the short and long options that take a value, for the git
// subcommands whose operands are paths.
var gitOpts = sync.OnceValue(func() map[string]optSpec {
	return map[string]optSpec{
		"commit":   {short: "mFCct", long: list("message file reuse-message reedit-message template author date fixup squash trailer cleanup pathspec-from-file")},
		"add":      {long: list("chmod pathspec-from-file")},
		"rm":       {long: list("pathspec-from-file")},
		"restore":  {short: "s", long: list("source conflict pathspec-from-file")},
		"checkout": {short: "bB", long: list("orphan conflict pathspec-from-file")},
		"clean":    {short: "e", long: list("exclude")},
		"tag":      {short: "mFu", long: list("message file local-user")},
		"push":     {short: "o", long: list("push-option repo receive-pack exec")},
		"fetch":    {long: list("depth deepen shallow-since shallow-exclude upload-pack refmap")},
		"clone":    {short: "obuc", long: list("origin branch upload-pack template config depth reference separate-git-dir")},
		"worktree": {short: "b", long: list("reason")},
		"reset":    {long: list("pathspec-from-file")},
		"stash":    {short: "m", long: list("message pathspec-from-file")},
	}
})

// findExec are find's actions that run a command, findOut those that write
// a file (their value), and findValues the predicates and options that
// take values (how many).
var (
	findExec = lazySet("-exec", "-execdir", "-ok", "-okdir")
	findOut  = sync.OnceValue(func() map[string]int {
		return map[string]int{"-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}
	})
	findValues = sync.OnceValue(func() map[string]int {
		return map[string]int{
			"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
			"-lname": 1, "-ilname": 1, "-type": 1, "-xtype": 1, "-perm": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1,
			"-size": 1, "-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1, "-newer": 1, "-anewer": 1,
			"-cnewer": 1, "-maxdepth": 1, "-mindepth": 1, "-samefile": 1, "-inum": 1, "-links": 1, "-fstype": 1,
			"-context": 1, "-used": 1, "-printf": 1, "-regextype": 1, "-files0-from": 1, "-newerat": 1, "-newermt": 1,
			"-newerct": 1, "-newerBt": 1,
		}
	})
)

// lazySet is a set of names (see set) built on first use.
func lazySet(names ...string) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool { return set(names...) })
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// list splits a list of names written apart.
func list(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ' ' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
