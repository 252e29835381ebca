// Package ptree is a persistent (immutable, path-copying) AVL tree.
//
// Every update returns a new Tree and leaves the receiver untouched, so a Tree
// value is a snapshot: copying it is O(1), any number of goroutines may read one
// concurrently, and two trees derived from a common ancestor share every
// subtree neither has changed. An update allocates O(log n) nodes (the path
// from the root to the changed key). Diff exploits the sharing: subtrees that
// are the same pointer in both trees are skipped without being visited, so
// diffing two versions that differ in k keys costs O(k log n), not O(n).
package ptree
