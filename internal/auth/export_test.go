package auth

// SetKeepFailures lowers the number of failed sign-ins remembered, so a
// test can reach the bound.
func (s *Service) SetKeepFailures(n int64) { s.keepFailures = n }

// SetCacheBound lowers how many credentials the cache holds before it
// starts afresh, so a test can reach the bound.
func (s *Service) SetCacheBound(n int) { s.cache.max = n }

// CachedCredentials is how many credentials the cache holds.
func (s *Service) CachedCredentials() int { return s.cache.len() }
