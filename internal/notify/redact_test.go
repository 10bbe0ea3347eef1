package notify_test

import (
	"strings"
	"testing"

	"github.com/madebook/madebook/internal/notify"
)

func TestRedactURLHidesWhatLooksLikeASecret(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"nothing secret", "https://hooks.example.com/madebook", "https://hooks.example.com/madebook"},
		{"readable words stay", "https://hooks.example.com/a-long-path-that-must-wrap-on-a-phone/release-notes-v2-2024",
			"https://hooks.example.com/a-long-path-that-must-wrap-on-a-phone/release-notes-v2-2024"},
		{"a port and a readable query stay", "http://10.0.0.5:8443/in?api-version=2024-01-01&team=ops",
			"http://10.0.0.5:8443/in?api-version=2024-01-01&team=ops"},
		{"a user and password", "http://bob:pw@hooks.example.com/x", "http://••••@hooks.example.com/x"},
		{"a user alone", "https://token@hooks.example.com/x", "https://••••@hooks.example.com/x"},
		{"Slack's token", "https://hooks.slack.com/services/T0/B0/abcdefgh1a2b", "https://hooks.slack.com/services/T0/B0/••••1a2b"},
		{"Slack's real shape", "https://hooks.slack.com/services/T012AB3CD/B045EF6GH/aBcDeFgHiJkLmNoPqRsTuVwX",
			"https://hooks.slack.com/services/T012AB3CD/B045EF6GH/••••uVwX"},
		{"Slack's token, too short to show any of it", "https://hooks.slack.com/services/T000/B000/XXXX",
			"https://hooks.slack.com/services/T000/B000/••••"},
		{"Discord's token", "https://discord.com/api/webhooks/1234567890123456789/abcDEF-ghi_JKL0123456789xyzXYZ",
			"https://discord.com/api/webhooks/1234567890123456789/••••zXYZ"},
		{"Zapier's key", "https://hooks.zapier.com/hooks/catch/123456/abcdef1/", "https://hooks.zapier.com/hooks/catch/123456/••••/"},
		{"a long random segment", "https://chat.example.com/hooks/k3j9x2m4q8wzk3j9x2m4q8wzab",
			"https://chat.example.com/hooks/••••wzab"},
		{"a mixed-case random segment", "https://maker.example.com/trigger/deploy/with/key/dA7kQ2mZ9xP4",
			"https://maker.example.com/trigger/deploy/with/key/dA7kQ2mZ9xP4"}, // 12 characters: not long enough to tell
		{"a 16-character random segment", "https://maker.example.com/trigger/deploy/with/key/dA7kQ2mZ9xP4wL3v",
			"https://maker.example.com/trigger/deploy/with/key/••••wL3v"},
		{"a UUID", "https://example.webhook.office.com/webhookb2/123e4567-e89b-12d3-a456-426614174000/IncomingWebhook/0f1e2d3c4b5a69788796a5b4c3d2e1f0/x",
			"https://example.webhook.office.com/webhookb2/••••4000/IncomingWebhook/••••e1f0/x"},
		{"a token in the query", "https://chat.googleapis.com/v1/spaces/AAAA/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token=abc",
			"https://chat.googleapis.com/v1/spaces/AAAA/messages?key=••••qsHI&token=••••"},
		{"a signature in the query", "https://in.example.com/h?sig=0123456789abcdef0123&v=1", "https://in.example.com/h?sig=••••0123&v=1"},
		{"a random query value whatever its name", "https://in.example.com/h?x=Zk4LmQ8pR2sT6vW0yB3d", "https://in.example.com/h?x=••••yB3d"},
		{"an empty secret stays empty", "https://in.example.com/h?token=&a=b", "https://in.example.com/h?token=&a=b"},
		{"an empty query stays", "https://in.example.com/h?", "https://in.example.com/h?"},
		{"an IPv6 host", "http://[fd00::5]:8080/x", "http://[fd00::5]:8080/x"},
		{"a fragment", "https://in.example.com/h#frag", "https://in.example.com/h#••••"},
		{"not a URL", "::not a url", "••••"},
		{"a relative URL", "/hooks/x", "••••"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := notify.RedactURL(c.in)
			if got != c.want {
				t.Errorf("RedactURL(%q)\n = %q\nwant %q", c.in, got, c.want)
			}
		})
	}
	// Nothing secret survives, in any of them.
	for _, secret := range []string{"pw@", "aBcDeFgHiJkLmNoPqRsTuVwX", "AIzaSy", "abcdef1", "dA7kQ2mZ9xP4wL3v"} {
		for _, c := range cases {
			if got := notify.RedactURL(c.in); strings.Contains(got, secret) {
				t.Errorf("RedactURL(%q) = %q shows %q", c.in, got, secret)
			}
		}
	}
}
