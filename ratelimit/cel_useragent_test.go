package ratelimit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseUserAgent checks the built-in parser on headers of the common
// browsers, systems, clients and crawlers.
func TestParseUserAgent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ua   string
		want UserAgent
	}{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
			UserAgent{Name: "Chrome", Version: "120.0.0.0", OS: "Windows", OSVersion: "10", Desktop: true}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91",
			UserAgent{Name: "Edge", Version: "120.0.2210.91", OS: "Windows", OSVersion: "10", Desktop: true}},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_12_6) AppleWebKit/603.3.8 (KHTML, like Gecko) Version/10.1.2 Safari/603.3.8",
			UserAgent{Name: "Safari", Version: "10.1.2", OS: "macOS", OSVersion: "10.12.6", Device: "Macintosh", Desktop: true}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
			UserAgent{Name: "Safari", Version: "17.1", OS: "iOS", OSVersion: "17.1", Device: "iPhone", Mobile: true}},
		{"Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/119.0.6045.169 Mobile/15E148 Safari/604.1",
			UserAgent{Name: "Chrome", Version: "119.0.6045.169", OS: "iOS", OSVersion: "16.6", Device: "iPad", Tablet: true}},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36",
			UserAgent{Name: "Chrome", Version: "120.0.6099.43", OS: "Android", OSVersion: "14", Device: "Pixel 8", Mobile: true}},
		{"Mozilla/5.0 (Linux; Android 13; SM-X700 Build/TP1A.220624.014) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36",
			UserAgent{Name: "Chrome", Version: "119.0.0.0", OS: "Android", OSVersion: "13", Device: "SM-X700", Tablet: true}},
		{"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
			UserAgent{Name: "Firefox", Version: "121.0", OS: "Linux", Desktop: true}},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
			UserAgent{Name: "Googlebot", Version: "2.1", URL: "http://www.google.com/bot.html", Bot: true}},
		{"curl/8.4.0", UserAgent{Name: "curl", Version: "8.4.0"}},
		{"Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0)",
			UserAgent{Name: "Internet Explorer", Version: "8.0", OS: "Windows", OSVersion: "7", Desktop: true}},
		{"Mozilla/5.0 (Windows NT 6.3; Trident/7.0; rv:11.0) like Gecko",
			UserAgent{Name: "Internet Explorer", Version: "11.0", OS: "Windows", OSVersion: "8.1", Desktop: true}},
		{"", UserAgent{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, parseUserAgent(tt.ua)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.ua, diff)
		}
	}
}

// TestUserAgentVariables checks that req.user_agent.* read the built-in
// parser, and the option's parser when given.
func TestUserAgentVariables(t *testing.T) {
	t.Parallel()
	r := newRequest("GET", "http://h/")
	r.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	if got := mustLimit(t, keyConfig("req.user_agent.name + ':' + string(req.user_agent.is_bot)")).EvaluateAt(r, base).BucketKey; got != "Googlebot:true" {
		t.Errorf("built-in parser: %q", got)
	}
	own := WithUserAgentParser(func(string) UserAgent { return UserAgent{Name: "mine"} })
	if got := mustLimit(t, keyConfig("req.user_agent.name"), own).EvaluateAt(r, base).BucketKey; got != "mine" {
		t.Errorf("WithUserAgentParser: %q", got)
	}
}

// FuzzParseUserAgent checks that no header makes the parser panic, and
// that at most one of mobile, tablet and desktop is set, and none for a
// bot.
func FuzzParseUserAgent(f *testing.F) {
	for _, ua := range []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) Version/17.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (Linux; Android 13; SM-X700 Build/TP1A) Chrome/119.0.0.0 Safari/537.36",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (Windows NT 6.3; Trident/7.0; rv:11.0) like Gecko", "curl/8.4.0", "Android ; ", " OS ", "",
	} {
		f.Add(ua)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		u := parseUserAgent(ua)
		n := 0
		for _, b := range []bool{u.Mobile, u.Tablet, u.Desktop} {
			if b {
				n++
			}
		}
		if n > 1 || u.Bot && n > 0 {
			t.Errorf("%q: %+v", ua, u)
		}
	})
}
