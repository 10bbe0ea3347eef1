package shell

import (
	"path"
	"slices"
	"strings"
)

// conditional analyzes a command of the conditional table: read-only
// unless its options or operands say it writes.
func (a *analyzer) conditional(c *cmd) {
	name := c.name()
	d := c.st.dir
	args := c.args[1:]
	switch name {
	case "sort":
		scan(args, optSpec{short: "kStTo", gnu: true, long: list("key buffer-size field-separator temporary-directory output parallel files0-from batch-size compress-program random-source sort")},
			func(n string, v field, has bool) {
				if (n == "-o" || n == "--output") && has {
					a.touch(Write, "sort -o", d, v)
				}
			})
	case "uniq":
		ops := operands(scan(args, optSpec{short: "fsw", gnu: true, long: list("skip-fields skip-chars check-chars")}, nil))
		if len(ops) >= 2 {
			a.touch(Write, "uniq", d, ops[1]...)
		}
	case "xxd":
		ops := operands(scan(args, optSpec{short: "cglosnC", gnu: true, long: list("cols groupsize len seek name")}, nil))
		if len(ops) >= 2 {
			a.touch(Write, "xxd", d, ops[1]...)
		}
	case "tree":
		scan(args, optSpec{short: "LPIoHT", gnu: true, long: list("charset filelimit timefmt sort fromfile")}, func(n string, v field, has bool) {
			if n == "-o" && has {
				a.touch(Write, "tree -o", d, v)
			}
		})
	case "base64":
		scan(args, optSpec{short: "iobw", gnu: true, long: list("input output wrap break")}, func(n string, v field, has bool) {
			if (n == "-o" || n == "--output") && has && v.lit != "-" {
				a.touch(Write, "base64 -o", d, v)
			}
		})
	case "yq":
		a.yq(c)
	case "sed", "gsed":
		a.sed(c)
	case "awk", "gawk", "mawk", "nawk":
		a.awk(c)
	case "find", "gfind":
		a.find(c)
	case "git":
		a.git(c)
	}
}

func (a *analyzer) yq(c *cmd) {
	d := c.st.dir
	inplace, expr := false, false
	ops := scan(c.args[1:], optSpec{short: "oIps", gnu: true, long: list("output-format input-format indent split-exp from-file expression")},
		func(n string, v field, has bool) {
			switch n {
			case "-i", "--inplace":
				inplace = true
			case "--from-file", "--expression":
				expr = true
			case "-s", "--split-exp":
				a.undecidable("yq -s", "yq -s writes files its expression names")
			}
		})
	if !inplace {
		return
	}
	if len(ops) > 0 && ops[0].known() && (ops[0].lit == "eval" || ops[0].lit == "e" || ops[0].lit == "eval-all" || ops[0].lit == "ea") {
		ops = ops[1:]
	}
	if !expr && len(ops) >= 2 {
		ops = ops[1:]
	}
	a.touch(Write, "yq -i", d, ops...)
}

// sed analyzes sed: it writes its files with -i (--in-place), and the files
// its script's w commands (and s///w) name; a script that runs commands
// (e) is undecidable. A script Madebook cannot tell all of (sed "s/x/$Y/")
// is read from the part it can.
func (a *analyzer) sed(c *cmd) {
	d := c.st.dir
	var scripts []string
	var files []field
	inplace, sandbox, given := false, false, false
	ops := scan(c.args[1:], optSpec{short: "efl", glued: "i", gnu: true, long: list("expression file line-length")},
		func(n string, v field, has bool) {
			switch {
			case n == "-e" || n == "--expression":
				given = true
				scripts = append(scripts, v.lit)
			case n == "-f" || n == "--file":
				given = true
				files = append(files, v)
			case n == "-i" || strings.HasPrefix(n, "--in-place") || n == "--in" || n == "--in-" || n == "--in-p":
				inplace = true
			case n == "--sandbox":
				sandbox = true
			}
		})
	if !given && len(ops) > 0 {
		scripts = append(scripts, ops[0].lit)
		ops = ops[1:]
	}
	for _, f := range files {
		text, ok := a.readScript(c, f)
		if !ok {
			if !sandbox {
				a.undecidable("sed -f", "it runs the sed script "+f.lit+", which Madebook cannot read here")
			}
			continue
		}
		scripts = append(scripts, text)
	}
	if !sandbox {
		writes, exec, ok := sedScript(strings.Join(scripts, "\n"))
		switch {
		case !ok:
			a.undecidable("sed", "Madebook cannot read sed's script")
		case exec:
			a.undecidable("sed e", "sed's script runs commands (e)")
		}
		var ws []field
		for _, w := range writes {
			ws = append(ws, litField(w))
		}
		a.touch(Write, "sed w", d, ws...)
	}
	if inplace {
		a.touch(Write, "sed -i", d, ops...)
	}
}

// readScript asks Options.Script for the text of the file f names.
func (a *analyzer) readScript(c *cmd, f field) (string, bool) {
	if !f.known() || f.glob || a.o.Script == nil {
		return "", false
	}
	p := f.lit
	if !path.IsAbs(p) && !f.anchored {
		if c.st.dir.why != "" || len(c.st.dir.list()) != 1 {
			return "", false
		}
		p = path.Join(c.st.dir.list()[0].lit, p)
	}
	return a.o.Script(p)
}

// awk analyzes awk: a program that holds >, | or system (it may print to
// files or run commands) is undecidable, and gawk -i inplace writes its
// files. The check errs: > in a comparison makes the program undecidable
// too.
func (a *analyzer) awk(c *cmd) {
	d := c.st.dir
	name := c.name()
	var progs []string
	var progFiles []field
	inplace := false
	ops := scan(c.args[1:], optSpec{short: "FvfeiElW", glued: "opd", gnu: true, long: list("field-separator assign file source include load exec")},
		func(n string, v field, has bool) {
			switch n {
			case "-f", "--file", "-E", "--exec":
				progFiles = append(progFiles, v)
			case "-e", "--source":
				progs = append(progs, v.lit)
			case "-i", "--include":
				if v.lit == "inplace" || v.lit == "inplace.awk" {
					inplace = true
				}
			case "-o", "-p", "-d":
				out := map[string]string{"-o": "awkprof.out", "-p": "awkprof.out", "-d": "awkvars.out"}[n]
				if has {
					a.touch(Write, name+" "+n, d, v)
				} else {
					a.touch(Write, name+" "+n, d, litField(out))
				}
			}
		})
	if len(progs) == 0 && len(progFiles) == 0 && len(ops) > 0 {
		progs = append(progs, ops[0].lit)
		ops = ops[1:]
	}
	for _, f := range progFiles {
		text, ok := a.readScript(c, f)
		if !ok {
			a.undecidable(name+" -f", "it runs the awk program "+f.lit+", which Madebook cannot read here")
			continue
		}
		progs = append(progs, text)
	}
	prog := strings.ReplaceAll(strings.Join(progs, "\n"), "||", "")
	if strings.ContainsAny(prog, ">|") || strings.Contains(prog, "system") {
		a.undecidable(name, "awk's program writes files or runs commands")
	}
	if inplace {
		var files []field
		for _, f := range ops {
			if !f.known() || !isAssignment(f.lit) {
				files = append(files, f)
			}
		}
		a.touch(Write, name+" -i inplace", d, files...)
	}
}

// find analyzes find: -delete writes the start paths, and so does -exec
// (and -execdir, -ok, -okdir) unless the command it runs is read-only;
// that command is analyzed too, with {} standing for each start path.
// -fprint FILE and its like write FILE.
func (a *analyzer) find(c *cmd) {
	d := c.st.dir
	args := c.args[1:]
	i := 0
	for i < len(args) && args[i].known() {
		s := args[i].lit
		switch {
		case s == "-H" || s == "-L" || s == "-P":
			i++
		case s == "-D":
			i += 2
		case strings.HasPrefix(s, "-O") && len(s) > 2:
			i++
		default:
			goto starts
		}
	}
starts:
	var starts []field
	for ; i < len(args); i++ {
		s := args[i].lit
		if args[i].known() && (strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == ")" || s == ",") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []field{litField(".")}
	}
	for ; i < len(args) && !a.full; i++ {
		s := args[i].lit
		if !args[i].known() {
			continue
		}
		switch {
		case findExec()[s]:
			j := i + 1
			for ; j < len(args); j++ {
				t := args[j].lit
				if t == ";" || (t == "+" && j > i+1 && strings.Contains(args[j-1].lit, "{}")) {
					break
				}
			}
			run := args[i+1 : min(j, len(args))]
			i = j
			if len(run) == 0 || a.readOnlyCall(c, run, false) {
				continue
			}
			a.touch(Write, "find "+s, d, starts...)
			if c.st.depth >= maxDepth {
				a.undecidable("find "+s, whyTooDeep)
				continue
			}
			for _, sp := range starts[:min(len(starts), 8)] {
				in := make([]field, len(run))
				for k, f := range run {
					in[k] = substitute(f, sp)
				}
				a.run(&cmd{st: c.st.child(c.env), args: in})
			}
		case s == "-delete":
			a.touch(Write, "find -delete", d, starts...)
		case findOut()[s] > 0:
			if i+1 < len(args) {
				a.touch(Write, "find "+s, d, args[i+1])
			}
			i += findOut()[s]
		case findValues()[s] > 0:
			i += findValues()[s]
		}
	}
}

// substitute is f with each {} replaced by the path sp (find -exec).
func substitute(f, sp field) field {
	if !f.known() || !strings.Contains(f.lit, "{}") {
		return f
	}
	if !sp.known() {
		return sp
	}
	return field{name: name{
		lit:  strings.ReplaceAll(f.lit, "{}", sp.lit),
		pat:  strings.ReplaceAll(f.pat, "{}", sp.pat),
		glob: f.glob || sp.glob,
	}, anchored: sp.anchored && strings.HasPrefix(f.lit, "{}")}
}

// git analyzes git. Its global options are skipped (-C DIR moves where it
// works); a read-only subcommand writes nothing, one that changes the
// working tree as a whole writes "." (in git's directory), and any other
// writes its path operands.
func (a *analyzer) git(c *cmd) {
	args := c.args[1:]
	d := c.st.dir
	i := 0
loop:
	for i < len(args) && args[i].known() {
		s := args[i].lit
		switch {
		case s == "-C" || s == "--work-tree":
			if i+1 < len(args) {
				d = d.join(args[i+1], "git "+s)
			}
			i += 2
		case strings.HasPrefix(s, "--work-tree="):
			d = d.join(args[i].trim(len("--work-tree=")), "git --work-tree")
			i++
		case s == "-c" || s == "--git-dir" || s == "--namespace" || s == "--config-env" || s == "--exec-path" || s == "--super-prefix" || s == "--list-cmds":
			i += 2
		case strings.HasPrefix(s, "-"):
			i++
		default:
			break loop
		}
	}
	if i >= len(args) {
		return
	}
	sub := args[i]
	if !sub.known() {
		a.undecidable("git", sub.reason())
		return
	}
	rest := args[i+1:]
	name := "git " + sub.lit
	tree := func() { a.touch(Write, name, d, litField(".")) }
	has := func(opts ...string) bool {
		for _, f := range rest {
			if f.known() && slices.Contains(opts, f.lit) {
				return true
			}
			if f.known() && f.lit == "--" {
				return false
			}
		}
		return false
	}
	operands := func() []field {
		sp := gitOpts()[sub.lit]
		sp.gnu = true
		var out []field
		for _, f := range scan(rest, sp, nil) {
			if f.known() && strings.Contains(f.lit, "://") {
				continue
			}
			out = append(out, f)
		}
		return out
	}
	switch s := sub.lit; {
	case gitReadOnly()[s]:
		scan(rest, optSpec{gnu: true, long: list("output")}, func(n string, v field, has bool) {
			if n == "--output" && has {
				a.touch(Write, name+" --output", d, v)
			}
		})
		return
	case s == "config":
		if has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--show-origin", "--show-scope", "get", "list") && len(rest) > 0 {
			return
		}
	case s == "remote":
		if len(rest) == 0 || has("-v", "--verbose") && len(rest) == 1 || rest[0].lit == "show" || rest[0].lit == "get-url" {
			return
		}
	case s == "branch":
		if gitListsOnly(rest, "--list -l -a --all -r --remotes -v -vv --verbose --show-current --contains --no-contains --merged --no-merged --points-at --format --sort --column --no-column --color --no-color -i --ignore-case") {
			return
		}
	case s == "tag":
		if gitListsOnly(rest, "--list -l -n --contains --no-contains --merged --no-merged --points-at --format --sort --column --no-column -i --ignore-case") {
			return
		}
	case s == "reflog":
		if len(rest) == 0 || rest[0].lit == "show" || strings.HasPrefix(rest[0].lit, "-") {
			return
		}
	case s == "stash":
		if len(rest) > 0 && (rest[0].lit == "list" || rest[0].lit == "show") {
			return
		}
		tree()
		return
	case s == "checkout":
		a.gitCheckout(name, d, rest)
		return
	case gitTree()[s]:
		tree()
		return
	case s == "apply":
		if has("--check", "--stat", "--numstat", "--summary") && !has("--apply") {
			return
		}
		tree()
		return
	case s == "reset":
		if has("--hard", "--merge", "--keep") {
			tree()
			return
		}
	case s == "clean":
		dry := false
		ops := scan(rest, optSpec{short: "e", gnu: true, long: list("exclude")}, func(n string, _ field, _ bool) {
			if n == "-n" || n == "--dry-run" {
				dry = true
			}
		})
		switch {
		case dry:
		case len(ops) == 0:
			tree()
		default:
			a.touch(Write, name, d, ops...)
		}
		return
	}
	a.touch(Write, name, d, operands()...)
}

// gitListsOnly reports whether the options of git branch (or tag) are all
// among the listing ones of opts, so that its operands are patterns.
func gitListsOnly(rest []field, opts string) bool {
	ok := list(opts)
	listing := false
	operands := false
	for _, f := range rest {
		if !f.known() {
			return false
		}
		s, _, _ := strings.Cut(f.lit, "=")
		switch {
		case strings.HasPrefix(s, "-"):
			if !slices.Contains(ok, s) {
				return false
			}
			if s == "--list" || s == "-l" {
				listing = true
			}
		default:
			operands = true
		}
	}
	return !operands || listing
}

// gitCheckout analyzes git checkout: with paths (after --, or more than
// one operand) it writes them; with a branch alone it switches the tree,
// which writes ".". A single operand may be either, and is taken as the
// whole tree.
func (a *analyzer) gitCheckout(name string, d dirs, rest []field) {
	var before, after []field
	dash, branch := false, false
	sp := gitOpts()["checkout"]
	for i := 0; i < len(rest); i++ {
		f := rest[i]
		if f.known() && f.lit == "--" {
			dash = true
			after = rest[i+1:]
			break
		}
		before = append(before, f)
	}
	ops := scan(before, optSpec{short: sp.short, long: sp.long, gnu: true}, func(n string, _ field, _ bool) {
		if n == "-b" || n == "-B" || n == "--orphan" {
			branch = true
		}
	})
	switch {
	case dash && len(after) > 0:
		a.touch(Write, name, d, after...)
	case dash || branch || len(ops) <= 1:
		a.touch(Write, name, d, litField("."))
	default:
		a.touch(Write, name, d, ops...)
	}
}

// tar analyzes tar: extracting writes into -C's directory (else "."),
// creating, appending or deleting writes the archive (-f), and
// --remove-files writes the files archived.
func (a *analyzer) tar(c *cmd) {
	st := c.st
	args := c.args[1:]
	var mode byte
	var archives []field
	cdir := st.dir
	toStdout, remove := false, false
	set := func(n string, v field, has bool) {
		switch n {
		case "-x", "--extract", "--get":
			mode = 'x'
		case "-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate":
			mode = 'c'
		case "--delete":
			mode = 'D'
		case "-t", "--list", "-d", "--diff", "--compare":
			if mode == 0 {
				mode = 't'
			}
		case "-f", "--file":
			if has {
				archives = append(archives, v)
			}
		case "-C", "--directory":
			if has {
				cdir = cdir.join(v, "tar -C")
			}
		case "-O", "--to-stdout":
			toStdout = true
		case "--remove-files":
			remove = true
		case "--to-command", "-F", "--info-script", "--new-volume-script", "--use-compress-program", "-I":
			if n == "--to-command" || n == "-F" || n == "--info-script" || n == "--new-volume-script" {
				a.undecidable("tar "+n, "tar "+n+" runs a command Madebook does not follow")
			}
		}
	}
	const values = "bCfFgHIKLNTVX"
	if len(args) > 0 && args[0].known() && args[0].lit != "" && args[0].lit[0] != '-' && isLetters(args[0].lit) {
		// The old style: tar xzf a.tgz, the values following in order.
		bundle := args[0].lit
		args = args[1:]
		for k := 0; k < len(bundle); k++ {
			n := shortNames()[bundle[k]]
			if strings.IndexByte(values, bundle[k]) >= 0 && len(args) > 0 {
				set(n, args[0], true)
				args = args[1:]
				continue
			}
			set(n, field{}, false)
		}
	}
	ops := scan(args, optSpec{short: values, gnu: true, long: list("file directory files-from exclude-from exclude use-compress-program to-command strip-components owner group mode format newer after-date label listed-incremental rsh-command info-script new-volume-script transform xform checkpoint-action")}, set)
	switch mode {
	case 'x':
		if !toStdout {
			a.touch(Write, "tar -x", cdir, litField("."))
		}
	case 'c', 'D':
		var out []field
		for _, f := range archives {
			if !f.known() || f.lit != "-" {
				out = append(out, f)
			}
		}
		command := "tar -c"
		if mode == 'D' {
			command = "tar --delete"
		}
		a.touch(Write, command, st.dir, out...)
		if remove && mode == 'c' {
			a.touch(Write, "tar --remove-files", cdir, ops...)
		}
	}
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// unzip writes into -d's directory, else "."; listing, testing and piping
// (-l, -t, -v, -p, -Z, -z) write nothing.
func (a *analyzer) unzip(c *cmd) {
	var dest []field
	listOnly := false
	scan(c.args[1:], optSpec{short: "dP", gnu: true}, func(n string, v field, has bool) {
		switch n {
		case "-d":
			if has {
				dest = append(dest, v)
			}
		case "-l", "-t", "-v", "-p", "-Z", "-z":
			listOnly = true
		}
	})
	if listOnly {
		return
	}
	if len(dest) == 0 {
		dest = []field{litField(".")}
	}
	a.touch(Write, "unzip", c.st.dir, dest...)
}

// patch writes -o's file, else its file operand, else "." (in -d's
// directory), and -r's reject file; --dry-run writes nothing.
func (a *analyzer) patch(c *cmd) {
	st := c.st
	d := st.dir
	var out, rej, in []field
	dry := false
	ops := scan(c.args[1:], optSpec{short: "dDiopBrFVYzg", gnu: true, long: list("directory ifdef input output strip prefix reject-file fuzz version-control basename-prefix suffix get quoting-style")},
		func(n string, v field, has bool) {
			switch n {
			case "-d", "--directory":
				if has {
					d = d.join(v, "patch -d")
				}
			case "-o", "--output":
				out = append(out, v)
			case "-r", "--reject-file":
				rej = append(rej, v)
			case "-i", "--input":
				in = append(in, v)
			case "--dry-run", "-C", "--check":
				dry = true
			}
		})
	if dry {
		return
	}
	a.touch(Read, "patch", st.dir, in...)
	switch {
	case len(out) > 0:
		a.touch(Write, "patch", d, out...)
	case len(ops) > 0:
		a.touch(Write, "patch", d, ops[0])
		a.touch(Read, "patch", d, ops[1:]...)
	default:
		a.touch(Write, "patch", d, litField("."))
	}
	for _, r := range rej {
		if r.lit != "-" {
			a.touch(Write, "patch", d, r)
		}
	}
}

// curl writes -o's files (in --output-dir's directory), "." for -O and
// -J (the file is named by the URL), and the files of -D, -c, --trace and
// their like; -T's file is read.
func (a *analyzer) curl(c *cmd) {
	st := c.st
	var outs, other []field
	remote := false
	odir := st.dir
	scan(c.args[1:], optSpec{short: "AbcCdDeEFhHKmoPQrtTuUwxXyYz", gnu: true, long: list("output output-dir dump-header cookie-jar trace trace-ascii stderr libcurl etag-save upload-file config data data-binary data-raw data-urlencode header request user user-agent referer form max-time proxy write-out cookie range continue-at cert key cacert")},
		func(n string, v field, has bool) {
			switch n {
			case "-o", "--output":
				if has && v.lit != "-" {
					outs = append(outs, v)
				}
			case "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name":
				remote = true
			case "--output-dir":
				if has {
					odir = odir.join(v, "curl --output-dir")
				}
			case "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save":
				if has && v.lit != "-" {
					other = append(other, v)
				}
			case "-T", "--upload-file":
				a.touch(Read, "curl", st.dir, v)
			}
		})
	a.touch(Write, "curl -o", odir, outs...)
	if remote {
		a.touch(Write, "curl -O", odir, litField("."))
	}
	a.touch(Write, "curl", st.dir, other...)
}

// wget writes -O's file, else into -P's directory (else "."), and its log
// files (-o, -a); --spider downloads nothing.
func (a *analyzer) wget(c *cmd) {
	st := c.st
	var doc, logs []field
	prefix := []field{litField(".")}
	spider := false
	scan(c.args[1:], optSpec{short: "aABDeiIlOoPQRtTUwX", gnu: true, long: list("output-document output-file append-output directory-prefix execute input-file base tries timeout wait quota user-agent domains reject accept level exclude-directories include-directories header post-data post-file body-data user password referer load-cookies save-cookies")},
		func(n string, v field, has bool) {
			switch n {
			case "-O", "--output-document":
				if has {
					doc = append(doc, v)
				}
			case "-P", "--directory-prefix":
				if has {
					prefix = []field{v}
				}
			case "-o", "--output-file", "-a", "--append-output", "--save-cookies":
				if has {
					logs = append(logs, v)
				}
			case "--spider":
				spider = true
			case "-i", "--input-file", "--load-cookies", "--post-file":
				a.touch(Read, "wget", st.dir, v)
			}
		})
	a.touch(Write, "wget", st.dir, logs...)
	switch {
	case spider:
	case len(doc) > 0:
		var out []field
		for _, f := range doc {
			if f.lit != "-" || !f.known() {
				out = append(out, f)
			}
		}
		a.touch(Write, "wget -O", st.dir, out...)
	default:
		a.touch(Write, "wget", st.dir, prefix...)
	}
}
