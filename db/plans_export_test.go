package db

// TraceQueries makes the store call fn with every query it runs through
// its statement cache, prepared or not, in a transaction or not, and the
// query's arguments (nil stops it): for the test that EXPLAINs what the
// pages ask.
func (s *Store) TraceQueries(fn func(query string, args []any)) { s.stmts.Trace(fn) }
