// Command idlewatt measures the power storage drives draw and proves whether
// they reach their idle states. See README.md and docs/.
package main
