package auth

// SetKeepFailures lowers the number of failed sign-ins remembered, so a
// test can reach the bound.
func (s *Service) SetKeepFailures(n int64) { s.keepFailures = n }
