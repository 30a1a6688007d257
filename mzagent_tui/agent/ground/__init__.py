"""The ground floor: small utilities every other floor of the core may use and that use nothing
above them: opening files beneath a root with no link followed (`beneath`), atomic text writes
and reads (`textfiles`), the error a tool reports (`errors`), the journal of temp files a crash
may leave (`leftovers`), unified diffs of a change (`diffs`), the providers' presets
(`providers`), the way a tool call is written for the model (`call_syntax`) and the name the
app's folders go by (`app_name`)."""
