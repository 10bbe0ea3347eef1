package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrkScript writes the Lua script that has wrk send the bench's requests
// (the route is wrk's first argument: /healthz, /brief or check), each
// request the next session of the fleet with its key, and returns its
// path.
func wrkScript(dir string, f fleet) (string, error) {
	var b strings.Builder
	table := func(n int, at func(int) string) {
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q", at(i))
		}
		b.WriteByte('}')
	}
	b.WriteString("local ids, keys, checks = ")
	table(len(f.sessions), func(i int) string { return f.sessions[i] })
	b.WriteString(", ")
	table(len(f.sessions), func(i int) string { return f.keys[i%len(f.keys)] })
	b.WriteString(", ")
	table(len(f.sessions), func(i int) string { return checkBody(f.runs[i]) })
	// Every request is formatted once, in init, so that wrk's own work per
	// request is one table lookup on every route alike: the ratios then
	// measure the server, not Lua building a POST.
	b.WriteString(`
local reqs, n = {}, 0
init = function(args)
  local route = args[1] or "/healthz"
  for k = 1, #ids do
    local h = {["Authorization"] = "Bearer " .. keys[k], ["Content-Type"] = "application/json"}
    if route == "/healthz" then
      reqs[k] = wrk.format("GET", "/healthz")
    elseif route == "/brief" then
      reqs[k] = wrk.format("POST", "/brief", h, '{"session":"' .. ids[k] .. '"}')
    else
      reqs[k] = wrk.format("POST", "/api/v1/sessions/" .. ids[k] .. "/tool-calls/check", h, checks[k])
    end
  end
end
request = function()
  n = n + 1
  return reqs[(n % #reqs) + 1]
end
`)
	path := filepath.Join(dir, "bench.lua")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// runWrk runs wrk against route for d with the given connections and
// returns how many requests were answered and how many of those failed
// (a status over 299, or a socket error).
func runWrk(ctx context.Context, base, script, route string, conns int, d time.Duration) (int64, int64, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "wrk", "-t2", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))+"s",
		"-s", script, base, "--", route)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("wrk: %w: %s", err, out)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var answered, failed int64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			answered, _ = strconv.ParseInt(f[0], 10, 64)
		case strings.HasPrefix(line, "  Non-2xx or 3xx responses:") && len(f) > 0:
			n, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			failed += n
		case strings.HasPrefix(line, "  Socket errors:"):
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				failed += n
			}
		}
	}
	if answered == 0 {
		return 0, 0, 0, fmt.Errorf("wrk answered nothing: %s", out)
	}
	return answered, failed, cpu, nil
}
