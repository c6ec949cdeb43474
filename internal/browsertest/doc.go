// Package browsertest opens a page in headless Chromium (chromedp) for a
// test and records every console error or warning, exception and network
// request, so a test can hold a page to "no error, nothing fetched from
// elsewhere". It skips the test, saying so, when no Chromium is found
// ($IDLEWATT_CHROMIUM, /usr/bin/chromium, or chromium / google-chrome on
// PATH) or under -short. The browser tests of report/html and report/live
// use it; nothing but _test.go files imports it.
package browsertest
