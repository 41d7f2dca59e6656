package run

import (
	"context"
	"errors"
	"net/http"

	"connector/pkg/auth"
	"connector/pkg/httpx"
)

// Failure types of the Airbyte protocol's TRACE ERROR message.
const (
	ConfigError    = "config_error"    // the user must change the configuration or credentials
	TransientError = "transient_error" // a later attempt may pass
	SystemError    = "system_error"    // anything else
)

// FailureType classifies the error of a failed stream the way the Airbyte protocol does:
// authentication failures and testing values the authenticator cannot use are config
// errors, as is the failure_type an error handler's filter names; network failures,
// timeouts, 408, 429 and 5xx (after the retries) are transient; the rest is a system error.
func FailureType(err error) string {
	var se *httpx.StatusError
	var ne *httpx.NetError
	var ce *auth.ConfigError
	switch {
	case auth.IsAuthError(err), errors.As(err, &ce):
		return ConfigError
	case errors.As(err, &se):
		switch se.FailureType {
		case ConfigError, TransientError, SystemError:
			return se.FailureType
		}
		switch {
		case se.IsAuth():
			return ConfigError
		case se.Status == http.StatusRequestTimeout, se.Status == http.StatusTooManyRequests, se.Status >= 500:
			return TransientError
		}
	case errors.As(err, &ne):
		// As the CDK's default error mapping reads requests' exceptions: a scheme other than
		// http and https (InvalidSchema) is the config's error; every other request that got
		// no response — refused, a host that does not resolve (ConnectionError), TLS
		// (SSLError), an invalid URL, too many redirects, a timeout — is transient. A body
		// over --max-body, a limit of connector, is the system's.
		switch {
		case ne.Answered != 0:
			return SystemError
		case ne.Scheme:
			return ConfigError
		}
		return TransientError
	case errors.Is(err, context.DeadlineExceeded):
		return TransientError
	}
	return SystemError
}
