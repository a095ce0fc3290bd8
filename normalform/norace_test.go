//go:build !race

package normalform

const raceBuild = false
