// Package planner will turn parsed queries into plans over an interface the
// index satisfies, and execute them. Not built yet: see issue 6.
package planner
