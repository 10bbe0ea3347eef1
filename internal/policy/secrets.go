package policy

import "github.com/madebook/madebook/internal/protocol"

// SecretsName is the name of the policy set a fresh database ships.
const SecretsName = "Secrets in source"

// secretPatterns are the "Secrets in source" patterns. Each wraps what it
// looks for in a named group, so that a finding's Match is the group's
// label and never the secret (see Finding.Match).
//
// The examples in this file are described in words: a source file that held
// one would be found by the very patterns it documents.
var secretPatterns = []string{
	// AWS access key id: AKIA (long-term) or ASIA (temporary), then 16
	// upper-case letters or digits, as a whole word.
	`\b(?P<AWS_access_key_id>(?:AKIA|ASIA)[0-9A-Z]{16})\b`,

	// AWS secret access key in an assignment: the name, in any case and
	// possibly quoted or prefixed (MY_AWS_SECRET_ACCESS_KEY), then =, :, :=
	// or =>, then a 40-character base64 value, possibly quoted, that is not
	// part of a longer one. A reference such as ${AWS_SECRET_ACCESS_KEY}
	// or $AWS_SECRET_ACCESS_KEY is not a value.
	`(?m)(?P<AWS_SECRET_ACCESS_KEY>(?i:aws_secret_access_key))["'\x60]?[ \t]*(?::=|=>|=|:)[ \t]*["'\x60]?` +
		`[A-Za-z0-9/+=]{40}(?:[^A-Za-z0-9/+=\n]|$)`,

	// A PEM private key block: RSA, EC, DSA, OPENSSH, ENCRYPTED or plain
	// PKCS #8, and PGP's PRIVATE KEY BLOCK. The header line is enough.
	`(?P<PRIVATE_KEY_block>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----)`,

	// GitHub tokens: personal (ghp_), OAuth (gho_), user-to-server (ghu_),
	// server-to-server (ghs_) and refresh (ghr_) tokens of at least 36
	// characters, and fine-grained personal access tokens (github_pat_).
	`\b(?P<GitHub_token>gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`,

	// Slack tokens: xoxb, xoxa, xoxp, xoxr and xoxs, a numeric team
	// segment, then at least ten more characters. A placeholder made of
	// words ("xoxb-" followed by "your-token") has no numeric segment.
	`\b(?P<Slack_token>xox[baprs]-[0-9]+-[0-9A-Za-z-]{10,})`,

	// A password assignment with a literal value. The key is any name that
	// ends in "password", in any case (DB_PASSWORD, db.password, a quoted
	// "password" key), possibly quoted, then =, :, := or =>. It is flagged
	// when the value is:
	//
	//   - a quoted string ("…", '…' or `…`) that is not empty and does not
	//     start with $, {, < or % — a variable, a template or a placeholder;
	//   - or an unquoted value that ends the line (a # comment may follow)
	//     and reads as a secret rather than a name: letters or underscores
	//     only up to its first digit or symbol (@ ! # % ^ & * + / ? -),
	//     which it must have, and no $ ( ) , ; { } < > or quotes.
	//
	// So an empty string, a ${VAR} or $VAR reference, a template, a call
	// such as os.Getenv(…) or getenv(…), a field or member such as
	// cfg.Password or process.env.X, a type annotation (str, string), a
	// keyword (None, null, nil) and a comparison (==, !=) are not flagged.
	// An unquoted value of letters alone (a lone word such as changeme) is
	// not flagged either: it cannot be told from an identifier.
	`(?m)(?P<password_assignment>(?i:password)["'\x60]?[ \t]*(?::=|=>|=|:)[ \t]*` +
		`(?:"[^"$<{%\n][^"\n]*"|'[^'$<{%\n][^'\n]*'|\x60[^\x60$<{%\n][^\x60\n]*\x60` +
		`|(?:[A-Za-z_]+[0-9@!#%^&*+/?\-]|[0-9@^+/?\-])[^\s"'\x60$(),;{}<>]*[ \t]*(?:#[^\n]*)?\r?$))`,

	// A credential in a URL's user information: a scheme (https, git+ssh,
	// postgres…), "://", a user name, ":", then a password or token and
	// "@". The password is the secret group, so a path or dependency that
	// holds one keeps its scheme, user and host when redacted
	// (git+https://x-access-token:[REDACTED]@github.com/…). A password that
	// starts with $, {, <, % or [ is a variable, a placeholder or
	// already redacted.
	`(?P<credential_in_URL>\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]+:)(?P<secret>[^\s/?#@$<{%\[][^\s/?#@]*)@`,
}

// SecretsInSource returns the "Secrets in source" policy set a fresh
// database ships: critical content_regex policies, with the action
// violation, for AWS access key ids and secret access keys, private key
// blocks, GitHub and Slack tokens, password assignments, and credentials
// in a URL's user information. Their ids are
// zero: the database assigns them.
func SecretsInSource() []Policy {
	ps := make([]Policy, len(secretPatterns))
	for i, p := range secretPatterns {
		ps[i] = Policy{Name: SecretsName, Severity: protocol.SeverityCritical, Kind: KindContentRegex,
			Pattern: p, Action: ActionViolation}
	}
	return ps
}
