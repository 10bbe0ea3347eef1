-- +goose Up
-- A failed delivery's last_error used to quote what the endpoint answered
-- (its status line and the start of its body, which let an admin read an
-- internal service through Madebook) or the HTTP client's error (which
-- names the URL, with the secrets it holds). It is a fixed phrase now; the
-- rows written before are given the phrase they would have had.
UPDATE outbox SET last_error = CASE
    WHEN last_status BETWEEN 300 AND 399 THEN 'HTTP ' || last_status || ' from the endpoint (redirects are not followed)'
    WHEN last_status IS NOT NULL THEN 'HTTP ' || last_status || ' from the endpoint'
    WHEN last_error LIKE '%connection refused%' THEN 'connection refused'
    WHEN last_error LIKE '%deadline exceeded%' OR last_error LIKE '%timeout%' THEN 'timed out'
    WHEN last_error LIKE '%no such host%' THEN 'host name not found'
    WHEN last_error LIKE '%connection reset%' THEN 'connection reset'
    ELSE 'request failed'
END
WHERE last_error IS NOT NULL AND last_error <> 'endpoint removed';

-- +goose Down
-- What the phrases replaced is not kept: there is nothing to restore.
SELECT 1;
