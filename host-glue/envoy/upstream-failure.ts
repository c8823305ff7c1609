// Upstream failures before response headers (no healthy upstream, connect timeout, refused or
// reset connections) as Envoy's router words them in its 503 replies.

/** Envoy's router reply texts (source/common/router/router.cc), matched by tests. */
export const UPSTREAM_RESET_PREFIX = 'upstream connect error or disconnect/reset before headers. reset reason: ';

/** Upstream failures before response headers, as Envoy's router words them. */
export function upstreamFailure(e: NodeJS.ErrnoException): { status: number; body: string; details: string } {
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN')
    return { status: 503, body: 'no healthy upstream', details: 'no_healthy_upstream' };
  if (e instanceof ConnectTimeout)
    return {
      status: 503,
      body: `${UPSTREAM_RESET_PREFIX}connection timeout`,
      details: 'upstream_reset_before_response_started{connection_timeout}',
    };
  if (
    e.code === 'ECONNREFUSED' ||
    e.code === 'EHOSTUNREACH' ||
    e.code === 'ENETUNREACH' ||
    e.code === 'EADDRNOTAVAIL'
  ) {
    const errno = Math.abs(e.errno ?? 0);
    return {
      status: 503,
      body: `${UPSTREAM_RESET_PREFIX}remote connection failure, transport failure reason: delayed connect error: ${errno}`,
      details: `upstream_reset_before_response_started{remote_connection_failure,delayed_connect_error:_${errno}}`,
    };
  }
  return {
    status: 503,
    body: `${UPSTREAM_RESET_PREFIX}connection termination`,
    details: 'upstream_reset_before_response_started{connection_termination}',
  };
}

export class ConnectTimeout extends Error {
  readonly code = 'ETIMEDOUT';
}
