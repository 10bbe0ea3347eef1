// Package pgcluster starts a throwaway high-availability PostgreSQL for
// tests, on loopback, in a temporary directory, on free ports: one etcd
// member and three Patroni members running PostgreSQL 15, with
// synchronous replication. A test can kill the current leader (its Patroni
// and its PostgreSQL, with SIGKILL, as a crashed machine would) and wait
// until a new leader accepts writes. Everything it started is stopped when
// the test ends; each member's log is a file in the directory, printed when
// the test fails.
//
// Patroni runs PostgreSQL, and PostgreSQL refuses to run as root: when the
// test runs as root (as CI does) Patroni runs as the "postgres" user, which
// owns the cluster's directory.
package pgcluster

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// RequireEnv is the environment variable that turns "the binaries are
// missing" from a skip into a failure (CI sets it to 1).
const RequireEnv = "MADEBOOK_REQUIRE_PATRONI"

// Timing is the cluster's failure detection, in seconds (Patroni's
// dynamic configuration). The leader renews its key in etcd every LoopWait
// seconds; the key expires TTL seconds after the last renewal, and a
// replica then takes over. Patroni's rule is loop_wait + 2×retry_timeout ≤
// ttl (a leader that cannot reach etcd within retry_timeout, twice, demotes
// itself before its key could expire under it); Patroni 3.0.2 accepts any
// integers and does not check the rule, so these values keep it:
// 2 + 2×4 = 10.
const (
	TTL          = 10
	LoopWait     = 2
	RetryTimeout = 4
)

// Binaries are the programs a cluster runs.
type Binaries struct {
	Patroni string // patroni
	Etcd    string // etcd (v3 API)
	PGBin   string // PostgreSQL's bin directory: initdb, pg_ctl, postgres
}

// Find looks for patroni and etcd on PATH and for PostgreSQL's bin
// directory (`pg_config --bindir`, then Debian's /usr/lib/postgresql/15/bin),
// and says what is missing.
func Find() (Binaries, error) {
	var b Binaries
	var missing []string
	var err error
	if b.Patroni, err = exec.LookPath("patroni"); err != nil {
		missing = append(missing, "patroni (apt-get install patroni)")
	}
	if b.Etcd, err = exec.LookPath("etcd"); err != nil {
		missing = append(missing, "etcd (apt-get install etcd-server)")
	}
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	dirs = append(dirs, "/usr/lib/postgresql/15/bin")
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "postgres")) && isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			b.PGBin = d
			break
		}
	}
	if b.PGBin == "" {
		missing = append(missing, "PostgreSQL's initdb, pg_ctl and postgres (apt-get install postgresql-15)")
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("missing: %s", strings.Join(missing, "; "))
	}
	return b, nil
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Require returns the binaries, skipping the test with the reason when
// any is missing, or failing it when MADEBOOK_REQUIRE_PATRONI=1.
func Require(tb testing.TB) Binaries {
	tb.Helper()
	b, err := Find()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("%s=1 and the Patroni cluster cannot run: %v", RequireEnv, err)
		}
		tb.Skipf("no Patroni cluster: %v (set %s=1 to make this a failure)", err, RequireEnv)
	}
	return b
}

// Member is one Patroni member and the PostgreSQL it runs.
type Member struct {
	Name    string
	PGPort  int // PostgreSQL
	APIPort int // Patroni's REST API
	dir     string

	cmd    *exec.Cmd
	exited chan struct{}
	killed bool
}

// DataDir is the member's PostgreSQL data directory.
func (m *Member) DataDir() string { return filepath.Join(m.dir, "data") }

// LogPath is the file Patroni's and PostgreSQL's output goes to.
func (m *Member) LogPath() string { return filepath.Join(m.dir, "patroni.log") }

// Cluster is a running etcd and three Patroni members.
type Cluster struct {
	tb   testing.TB
	bins Binaries
	// Dir holds everything: etcd's data, each member's data directory,
	// configuration and log.
	Dir     string
	Members []*Member

	superPass, replPass, appPass string
	etcdPort                     int
	etcd                         *exec.Cmd
	etcdExited                   chan struct{}
	cred                         *syscall.Credential // the postgres user's, when running as root

	mu     sync.Mutex
	groups map[int]bool // process groups started: Patroni's, PostgreSQL's, etcd's
	stop   sync.Once
}

// Scope is the Patroni cluster's name, and AppUser the role the URL names.
const (
	Scope   = "madebook-test"
	AppUser = "madebook"
)

// Start starts etcd and three Patroni members and waits until there is a
// leader, a synchronous standby and a third, streaming replica, then
// creates the application role. It stops everything when the test ends.
func Start(tb testing.TB, bins Binaries) *Cluster {
	tb.Helper()
	c := &Cluster{tb: tb, bins: bins, superPass: secret(), replPass: secret(), appPass: secret(), groups: map[int]bool{}}
	if os.Geteuid() == 0 {
		cred, err := postgresUser()
		if err != nil {
			tb.Fatal(err)
		}
		c.cred = cred
	}
	dir, err := os.MkdirTemp(traversableTemp(), "pgcluster-")
	if err != nil {
		tb.Fatal(err)
	}
	c.Dir = dir
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Error(err)
		}
		if tb.Failed() {
			c.dumpLogs()
		}
		if err := os.RemoveAll(c.Dir); err != nil {
			tb.Errorf("removing the cluster's directory: %v", err)
		}
	})

	ports := freePorts(tb, 2+2*3)
	c.etcdPort = ports[0]
	if err := c.startEtcd(ports[0], ports[1]); err != nil {
		tb.Fatal(err)
	}
	for i := range 3 {
		m := &Member{Name: fmt.Sprintf("m%d", i+1), PGPort: ports[2+2*i], APIPort: ports[3+2*i]}
		m.dir = filepath.Join(c.Dir, m.Name)
		c.Members = append(c.Members, m)
	}
	if err := c.chownForPostgres(c.Dir); err != nil {
		tb.Fatal(err)
	}
	for _, m := range c.Members {
		if err := c.startMember(m); err != nil {
			tb.Fatal(err)
		}
	}
	if err := c.waitHealthy(120 * time.Second); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.exec(ctx, "postgres", fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", AppUser, c.appPass),
		"CREATE TABLE pgcluster_probe (at timestamptz NOT NULL DEFAULT now())"); err != nil {
		tb.Fatal(err)
	}
	if err := c.everywhere(ctx, "SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1)", AppUser); err != nil {
		tb.Fatal(err)
	}
	return c
}

// secret is a random password: hex, so it needs no quoting in a URL or SQL.
func secret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// postgresUser is the credential processes run with when the test runs as
// root.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user: %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// traversableTemp is the temporary directory when the postgres user can
// reach into it, else /tmp (a root-only TMPDIR would lock it out).
func traversableTemp() string {
	d := os.TempDir()
	if os.Geteuid() != 0 {
		return d
	}
	for p := d; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if p == filepath.Dir(p) {
			return d
		}
	}
}

// chownForPostgres makes the postgres user own dir (when running as root)
// and creates the members' directories, mode 0700 as PostgreSQL wants.
func (c *Cluster) chownForPostgres(dir string) error {
	for _, m := range c.Members {
		if err := os.Mkdir(m.dir, 0o700); err != nil {
			return err
		}
	}
	if c.cred == nil {
		return nil
	}
	for _, p := range append([]string{dir}, c.memberDirs()...) {
		if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) memberDirs() []string {
	var out []string
	for _, m := range c.Members {
		out = append(out, m.dir)
	}
	return out
}

// freePorts reserves n distinct free loopback ports by listening on them
// all at once, then releases them for the cluster to take.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// env is the environment of the processes started: nothing of the test's
// own (a PGHOST or PGPASSWORD there must not steer Patroni), a C locale.
func env(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C", "LC_ALL=C"}
}

func (c *Cluster) startEtcd(clientPort, peerPort int) error {
	data := filepath.Join(c.Dir, "etcd")
	logf, err := os.Create(filepath.Join(c.Dir, "etcd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	client := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	cmd := exec.Command(c.bins.Etcd, "--name", "etcd1", "--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "etcd1="+peer, "--initial-cluster-state", "new",
		"--initial-cluster-token", filepath.Base(c.Dir))
	cmd.Dir = c.Dir
	cmd.Env = env(c.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting etcd: %v", err)
	}
	c.addGroup(cmd.Process.Pid)
	c.etcd = cmd
	c.etcdExited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(c.etcdExited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(client + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.etcdExited:
			return fmt.Errorf("etcd exited at start:\n%s", tail(filepath.Join(c.Dir, "etcd.log"), 40))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd not healthy within 30 s:\n%s", tail(filepath.Join(c.Dir, "etcd.log"), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// config is the member's Patroni configuration. Patroni reads YAML, of
// which JSON is a part.
func (c *Cluster) config(m *Member) map[string]any {
	hostport := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	return map[string]any{
		"scope": Scope,
		"name":  m.Name,
		"log":   map[string]any{"level": "INFO"},
		"restapi": map[string]any{
			"listen":          hostport(m.APIPort),
			"connect_address": hostport(m.APIPort),
		},
		"etcd3": map[string]any{"hosts": []string{hostport(c.etcdPort)}},
		"bootstrap": map[string]any{
			"dcs": map[string]any{
				"ttl":           TTL,
				"loop_wait":     LoopWait,
				"retry_timeout": RetryTimeout,
				// With asynchronous replication the leader acknowledges a
				// commit before any replica has it, and Patroni may
				// promote a replica that lacks the last commits: an
				// acknowledged write would be lost in a failover. In
				// synchronous mode the leader acknowledges a commit only
				// once its synchronous standby has it, and Patroni
				// promotes only that standby, so a failover never loses an
				// acknowledged commit. (Not strict: with no standby left
				// at all the leader goes on accepting writes alone rather
				// than stopping.)
				"synchronous_mode":        true,
				"maximum_lag_on_failover": 1 << 20,
				"postgresql": map[string]any{
					"use_pg_rewind": true,
					"parameters": map[string]any{
						"wal_log_hints":      "on",
						"max_connections":    200,
						"synchronous_commit": "on",
					},
				},
			},
			"initdb": []any{map[string]any{"encoding": "UTF8"}, map[string]any{"auth": "scram-sha-256"}},
			"pg_hba": []string{
				"local all all scram-sha-256",
				"host replication replicator 127.0.0.1/32 scram-sha-256",
				"host all all 127.0.0.1/32 scram-sha-256",
			},
		},
		"postgresql": map[string]any{
			"listen":          hostport(m.PGPort),
			"connect_address": hostport(m.PGPort),
			"data_dir":        m.DataDir(),
			"bin_dir":         c.bins.PGBin,
			"pgpass":          filepath.Join(m.dir, "pgpass"),
			"authentication": map[string]any{
				"superuser":   map[string]any{"username": "postgres", "password": c.superPass},
				"replication": map[string]any{"username": "replicator", "password": c.replPass},
				"rewind":      map[string]any{"username": "postgres", "password": c.superPass},
			},
			"parameters": map[string]any{
				"unix_socket_directories": m.dir,
				// Dynamic shared memory in files under the data directory,
				// not /dev/shm: a killed member leaves nothing behind
				// once the directory is removed.
				"dynamic_shared_memory_type": "mmap",
			},
		},
	}
}

func (c *Cluster) startMember(m *Member) error {
	raw, err := json.MarshalIndent(c.config(m), "", "  ")
	if err != nil {
		return err
	}
	cfg := filepath.Join(m.dir, "patroni.yml")
	if err := os.WriteFile(cfg, raw, 0o600); err != nil {
		return err
	}
	logf, err := os.OpenFile(m.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	if c.cred != nil {
		for _, p := range []string{cfg, m.LogPath()} {
			if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				return err
			}
		}
	}
	cmd := exec.Command(c.bins.Patroni, cfg)
	cmd.Dir = m.dir
	cmd.Env = env(m.dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting patroni %s: %v", m.Name, err)
	}
	c.addGroup(cmd.Process.Pid)
	m.cmd = cmd
	m.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(m.exited)
	}()
	return nil
}

func (c *Cluster) addGroup(pgid int) {
	c.mu.Lock()
	c.groups[pgid] = true
	c.mu.Unlock()
}

// Status is one member as Patroni's GET /cluster reports it.
type Status struct {
	Name  string `json:"name"`
	Role  string `json:"role"` // leader, sync_standby, replica
	State string `json:"state"`
	Port  int    `json:"port"`
}

// Status asks the live members' REST APIs, in turn, for the cluster as
// Patroni sees it.
func (c *Cluster) Status() ([]Status, error) {
	cl := &http.Client{Timeout: 2 * time.Second}
	var last error = errors.New("no member is running")
	for _, m := range c.Members {
		if m.killed {
			continue
		}
		res, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/cluster", m.APIPort))
		if err != nil {
			last = err
			continue
		}
		var body struct{ Members []Status }
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil {
			last = err
			continue
		}
		return body.Members, nil
	}
	return nil, last
}

// Leader is the member Patroni names the leader, if any.
func (c *Cluster) Leader() (*Member, error) {
	st, err := c.Status()
	if err != nil {
		return nil, err
	}
	for _, s := range st {
		if s.Role == "leader" {
			return c.member(s.Name), nil
		}
	}
	return nil, errors.New("no leader")
}

func (c *Cluster) member(name string) *Member {
	for _, m := range c.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// waitHealthy waits until every member is running, one as the leader and
// one as its synchronous standby, and the leader accepts a connection.
func (c *Cluster) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var seen string
	for {
		for _, m := range c.Members {
			select {
			case <-m.exited:
				return fmt.Errorf("patroni %s exited at start (%v):\n%s", m.Name, m.cmd.ProcessState, tail(m.LogPath(), 60))
			default:
			}
		}
		st, err := c.Status()
		if err == nil {
			roles := map[string]int{}
			running := 0
			for _, s := range st {
				roles[s.Role]++
				if s.State == "running" || s.State == "streaming" {
					running++
				}
			}
			raw, _ := json.Marshal(st)
			seen = string(raw)
			if running == len(c.Members) && len(st) == len(c.Members) && roles["leader"] == 1 && roles["sync_standby"] == 1 {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := c.exec(ctx, "postgres", "SELECT 1")
				cancel()
				if err == nil {
					return nil
				}
				seen += fmt.Sprintf(" (the leader refuses a connection: %v)", err)
			}
		} else {
			seen = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no leader with a synchronous standby and three running members within %s; last seen: %s", limit, seen)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// hosts is the members' addresses for a multi-host URL.
func (c *Cluster) hosts() string {
	var hs []string
	for _, m := range c.Members {
		hs = append(hs, fmt.Sprintf("127.0.0.1:%d", m.PGPort))
	}
	return strings.Join(hs, ",")
}

// URL is the application's connection URL for database db: the
// application role, and all three members, of which a client takes the one
// that accepts writes (target_session_attrs=read-write), wherever the
// leader is now.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/%s?target_session_attrs=read-write&sslmode=disable&connect_timeout=2",
		AppUser, c.appPass, c.hosts(), db)
}

// SuperURL is URL as the superuser.
func (c *Cluster) SuperURL(db string) string {
	return fmt.Sprintf("postgres://postgres:%s@%s/%s?target_session_attrs=read-write&sslmode=disable&connect_timeout=2",
		c.superPass, c.hosts(), db)
}

// exec runs statements as the superuser on the leader, in database db.
func (c *Cluster) exec(ctx context.Context, db string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, c.SuperURL(db))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// CreateDatabase creates database name, owned by the application role.
func (c *Cluster) CreateDatabase(name string) {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.exec(ctx, "postgres", fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgx.Identifier{name}.Sanitize(), AppUser)); err != nil {
		c.tb.Fatal(err)
	}
	if err := c.everywhere(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name); err != nil {
		c.tb.Fatal(err)
	}
}

// everywhere waits until query (a boolean) is true on every live member.
// The leader's commit waits for its synchronous standby to have the
// change, not to have replayed it, and the third member is asynchronous;
// and a client trying the members in turn stops at the first that says
// the database or the role does not exist (pgx does, as libpq does), so
// a new database or role must be on every member before a URL names it.
func (c *Cluster) everywhere(ctx context.Context, query string, args ...any) error {
	for _, m := range c.Members {
		if m.killed {
			continue
		}
		dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", c.superPass, m.PGPort)
		for {
			ok, err := func() (bool, error) {
				conn, err := pgx.Connect(ctx, dsn)
				if err != nil {
					return false, err
				}
				defer conn.Close(context.Background())
				var ok bool
				err = conn.QueryRow(ctx, query, args...).Scan(&ok)
				return ok, err
			}()
			if ok {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s %v: not true on %s in time (%v)", query, args, m.Name, err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// KillLeader kills the current leader as a crashed machine would: SIGKILL
// to its Patroni and to every process of its PostgreSQL, at once. It
// returns once they are gone, with the member and the moment of the kill.
func (c *Cluster) KillLeader() (*Member, time.Time) {
	c.tb.Helper()
	m, err := c.Leader()
	if err != nil {
		c.tb.Fatalf("kill the leader: %v", err)
	}
	pm, err := postmaster(m.DataDir())
	if err != nil {
		c.tb.Fatalf("kill the leader %s: %v", m.Name, err)
	}
	pgGroup, err := syscall.Getpgid(pm)
	if err != nil {
		c.tb.Fatalf("kill the leader %s: the postmaster %d: %v", m.Name, pm, err)
	}
	c.addGroup(pgGroup)
	at := time.Now()
	m.killed = true
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	_ = syscall.Kill(-pgGroup, syscall.SIGKILL)
	deadline := time.Now().Add(15 * time.Second)
	for groupAlive(pgGroup) || groupAlive(m.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			c.tb.Fatalf("the leader %s's processes survive SIGKILL for 15 s", m.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	<-m.exited
	removeInterlock(m.DataDir())
	return m, at
}

// postmaster reads the postmaster's process id from the data directory
// and checks that the process is that postmaster (not a reused id).
func postmaster(dataDir string) (int, error) {
	lines, err := pidFile(dataDir)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %q", lines[0])
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), dataDir) {
		return 0, fmt.Errorf("no postmaster running on %s", dataDir)
	}
	return pid, nil
}

func pidFile(dataDir string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	return strings.Split(string(raw), "\n"), nil
}

// removeInterlock removes the small System V segment a postmaster keeps
// to guard its data directory: after a clean shutdown PostgreSQL removes
// it, after SIGKILL it would outlive the test.
func removeInterlock(dataDir string) {
	lines, err := pidFile(dataDir)
	if err != nil || len(lines) < 7 {
		return
	}
	f := strings.Fields(lines[6]) // "key shmid"
	if len(f) != 2 {
		return
	}
	if id, err := strconv.Atoi(f[1]); err == nil {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
}

// groupAlive says whether any process of the group is running (a zombie
// waiting for init to reap it is not).
func groupAlive(pgid int) bool {
	return len(groupMembers(pgid)) > 0
}

// groupMembers lists the live processes in group pgid, from /proc.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		s := string(raw)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// WaitWritable waits until a leader accepts a write through the
// multi-host URL, and returns the member that took it and when.
func (c *Cluster) WaitWritable(limit time.Duration) (*Member, time.Time, error) {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		port, err := c.probe(ctx)
		cancel()
		if err == nil {
			for _, m := range c.Members {
				if m.PGPort == port {
					return m, time.Now(), nil
				}
			}
			return nil, time.Time{}, fmt.Errorf("a write was taken on port %d, no member's", port)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return nil, time.Time{}, fmt.Errorf("no write accepted within %s: %v", limit, last)
}

// probe writes a row on whichever member takes writes and returns its port.
func (c *Cluster) probe(ctx context.Context) (int, error) {
	conn, err := pgx.Connect(ctx, c.SuperURL("postgres"))
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var port int
	err = conn.QueryRow(ctx, "INSERT INTO pgcluster_probe DEFAULT VALUES RETURNING inet_server_port()").Scan(&port)
	return port, err
}

// Stop stops everything: each live Patroni with SIGTERM (it shuts its
// PostgreSQL down first), then etcd; whatever still runs after 30 s gets
// SIGKILL. It fails if any process it started is left. Safe to call twice.
func (c *Cluster) Stop() error {
	var err error
	c.stop.Do(func() { err = c.stopAll() })
	return err
}

func (c *Cluster) stopAll() error {
	for _, m := range c.Members {
		if m.cmd == nil || m.killed {
			continue
		}
		if pm, err := postmaster(m.DataDir()); err == nil {
			if g, err := syscall.Getpgid(pm); err == nil {
				c.addGroup(g)
			}
		}
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
	}
	grace, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range c.Members {
		if m.cmd == nil {
			continue
		}
		select {
		case <-m.exited:
		case <-grace.Done():
		}
	}
	if c.etcd != nil {
		_ = c.etcd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.etcdExited:
		case <-time.After(10 * time.Second):
		}
	}
	c.mu.Lock()
	groups := make([]int, 0, len(c.groups))
	for g := range c.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	var left []string
	for _, g := range groups {
		if ps := groupMembers(g); len(ps) > 0 {
			left = append(left, fmt.Sprintf("group %d: %v", g, ps))
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
	}
	for _, m := range c.Members {
		if m.cmd != nil {
			<-m.exited
		}
	}
	if c.etcd != nil {
		<-c.etcdExited
	}
	if len(left) > 0 {
		// A postmaster killed now left its interlock segment (one that
		// stopped cleanly removed it, and its postmaster.pid).
		for _, m := range c.Members {
			if !m.killed {
				removeInterlock(m.DataDir())
			}
		}
	}
	wait := time.Now().Add(10 * time.Second)
	for _, g := range groups {
		for groupAlive(g) && time.Now().Before(wait) {
			time.Sleep(20 * time.Millisecond)
		}
		if ps := groupMembers(g); len(ps) > 0 {
			return fmt.Errorf("processes of the cluster survive SIGKILL: group %d: %v", g, ps)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("processes of the cluster did not stop within 30 s of SIGTERM and were killed: %s", strings.Join(left, "; "))
	}
	return nil
}

// Leftovers lists the processes still running whose command line names
// the cluster's directory: after Stop there should be none.
func (c *Cluster) Leftovers() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(raw) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(strings.TrimRight(string(raw), "\x00"), "\x00", " ")
		if strings.Contains(cmd, c.Dir) {
			out = append(out, e.Name()+" "+cmd)
		}
	}
	return out
}

// dumpLogs prints the end of each member's log, and etcd's.
func (c *Cluster) dumpLogs() {
	paths := []string{filepath.Join(c.Dir, "etcd.log")}
	for _, m := range c.Members {
		paths = append(paths, m.LogPath())
	}
	for _, p := range paths {
		c.tb.Logf("---- %s (last 150 lines)\n%s", p, tail(p, 150))
	}
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// Redact replaces the cluster's passwords in s, for logs.
func (c *Cluster) Redact(s string) string {
	for _, p := range []string{c.superPass, c.replPass, c.appPass} {
		s = strings.ReplaceAll(s, p, "xxxxx")
	}
	return s
}
