package ratelimit

import (
	"strings"
)

// parseUserAgent is the built-in User-Agent parser behind
// req.user_agent.name and the other parsed fields, used unless
// [WithUserAgentParser] supplies another. It recognizes the common
// browsers, operating systems, command-line clients and crawlers by their
// usual tokens; anything else gets the first product token as its name.
func parseUserAgent(ua string) UserAgent {
	var u UserAgent
	lower := strings.ToLower(ua)
	u.URL = uaURL(ua)
	u.OS, u.OSVersion, u.Device = uaOS(ua)

	for _, b := range uaProducts {
		if v, ok := uaToken(ua, b.token); ok && (b.unless == "" || !strings.Contains(ua, b.unless)) {
			u.Name, u.Version = b.name, v
			switch b.token {
			case "Safari/": // Safari's own version is in Version/
				u.Version, _ = uaToken(ua, "Version/")
			case "Trident/": // Internet Explorer 11: "Trident/7.0; rv:11.0"
				u.Version, _ = uaToken(ua, "rv:")
			}
			break
		}
	}
	if first, _, _ := strings.Cut(ua, " "); u.Name == "" && first != "" && !strings.HasPrefix(first, "Mozilla/") {
		u.Name, u.Version, _ = strings.Cut(first, "/")
	}
	for _, w := range []string{"bot", "crawl", "spider", "slurp", "facebookexternalhit", "headlesschrome"} {
		if strings.Contains(lower, w) {
			u.Bot = true
		}
	}
	switch {
	case u.Bot:
	case u.Device == "iPad" || strings.Contains(lower, "tablet") || u.OS == "Android" && !strings.Contains(ua, "Mobile"):
		u.Tablet = true
	case strings.Contains(ua, "Mobile") || u.Device == "iPhone":
		u.Mobile = true
	case u.OS == "Windows" || u.OS == "macOS" || u.OS == "Linux" || u.OS == "ChromeOS":
		u.Desktop = true
	}
	return u
}

// uaProducts are the browser and client tokens, most specific first:
// Edge and Opera also send Chrome's token, and Chrome Safari's.
var uaProducts = []struct{ token, name, unless string }{
	{"Edg/", "Edge", ""}, {"Edge/", "Edge", ""}, {"EdgiOS/", "Edge", ""}, {"OPR/", "Opera", ""},
	{"SamsungBrowser/", "Samsung Browser", ""}, {"YaBrowser/", "Yandex Browser", ""},
	{"Firefox/", "Firefox", ""}, {"FxiOS/", "Firefox", ""}, {"CriOS/", "Chrome", ""},
	{"HeadlessChrome/", "Headless Chrome", ""}, {"Chrome/", "Chrome", ""},
	{"Safari/", "Safari", "Android"}, {"MSIE ", "Internet Explorer", ""}, {"Trident/", "Internet Explorer", ""},
	{"Googlebot/", "Googlebot", ""}, {"bingbot/", "Bingbot", ""},
}

// uaToken returns the version after token ("Chrome/" in "Chrome/120.0
// Safari"), up to the next space, semicolon or parenthesis.
func uaToken(ua, token string) (string, bool) {
	i := strings.Index(ua, token)
	if i < 0 {
		return "", false
	}
	return uaUntil(ua[i+len(token):], " ;)"), true
}

func uaUntil(s, stops string) string {
	if i := strings.IndexAny(s, stops); i >= 0 {
		return s[:i]
	}
	return s
}

// uaOS finds the operating system, its version and the device in the
// header's comment ("(iPhone; CPU iPhone OS 17_1 like Mac OS X)").
func uaOS(ua string) (os, version, device string) {
	switch {
	case strings.Contains(ua, "iPhone"), strings.Contains(ua, "iPad"), strings.Contains(ua, "iPod"):
		device = "iPhone"
		if strings.Contains(ua, "iPad") {
			device = "iPad"
		} else if strings.Contains(ua, "iPod") {
			device = "iPod"
		}
		if i := strings.Index(ua, " OS "); i >= 0 {
			version = strings.ReplaceAll(uaUntil(ua[i+4:], " ;)"), "_", ".")
		}
		return "iOS", version, device
	case strings.Contains(ua, "Android"):
		v, _ := uaToken(ua, "Android ")
		// "(Linux; Android 14; Pixel 8 Build/...)": the model follows the
		// version.
		lead := "Android " + v + "; "
		if i := strings.Index(ua, lead); v != "" && i >= 0 {
			device, _, _ = strings.Cut(uaUntil(ua[i+len(lead):], ";)"), " Build/")
		}
		return "Android", v, device
	case strings.Contains(ua, "Windows NT "):
		v, _ := uaToken(ua, "Windows NT ")
		names := map[string]string{"10.0": "10", "6.3": "8.1", "6.2": "8", "6.1": "7", "6.0": "Vista", "5.1": "XP"}
		if n, ok := names[v]; ok {
			v = n
		}
		return "Windows", v, ""
	case strings.Contains(ua, "Mac OS X"):
		v, _ := uaToken(ua, "Mac OS X ")
		return "macOS", strings.ReplaceAll(v, "_", "."), "Macintosh"
	case strings.Contains(ua, "CrOS"):
		return "ChromeOS", "", ""
	case strings.Contains(ua, "Linux"):
		return "Linux", "", ""
	}
	return "", "", ""
}

// uaURL returns the first http(s) URL in the header, as crawlers send
// ("+http://www.google.com/bot.html").
func uaURL(ua string) string {
	i := strings.Index(ua, "http://")
	if j := strings.Index(ua, "https://"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return ""
	}
	return uaUntil(ua[i:], " ;)")
}
