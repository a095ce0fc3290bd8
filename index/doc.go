// Package index will hold flowq's Badger index of normal forms: the only
// package that knows Badger exists. Not built yet: see issue 5.
package index
