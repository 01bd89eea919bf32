package acctapi

import (
	"runtime"
	"runtime/debug"
)

// modulePath is this module's import path, looked up in the build info.
const modulePath = "github.com/acctapi/acctapi"

// develVersion is reported when the module is built from its own source
// tree, where the build info carries no release version.
const develVersion = "v0.0.0-devel"

// Version returns the version of this module compiled into the program, as
// the Go build info records it ("v1.2.3", or a pseudo-version), or
// "v0.0.0-devel" when the module is the main module built from a work tree.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return develVersion
	}
	return moduleVersion(bi)
}

func moduleVersion(bi *debug.BuildInfo) string {
	var v string
	if bi.Main.Path == modulePath {
		v = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			v = d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return develVersion
	}
	return v
}

// userAgent is the library's User-Agent product token.
func userAgent() string {
	return "acctapi-go/" + Version() + " (" + runtime.Version() + "; " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}
