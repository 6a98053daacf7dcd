// Package qsl holds query sample libraries: the samples a run sends, as raw
// tensors ready to be batched into requests. Samples are made or loaded
// before the clock starts (LoadGen's "untimed" load).
package qsl
