// Package deploy holds no code: it is the module of the tests that decode
// every Kubernetes manifest under deploy/ strictly into the Kubernetes API
// types. It is a module of its own so that k8s.io/api stays out of the
// main module and its binaries.
package deploy
