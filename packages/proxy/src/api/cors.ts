// CORS of the management API: `*` when no origins are configured, otherwise only the listed origins.
export const CORS_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
export const CORS_HEADERS = 'Authorization, Content-Type, Accept';

export function corsHeaders(origin: string | undefined, allowed: readonly string[], preflight: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (allowed.length === 0) {
    out['access-control-allow-origin'] = '*';
  } else if (origin !== undefined && allowed.includes(origin)) {
    out['access-control-allow-origin'] = origin;
    out.vary = 'Origin';
  } else {
    if (allowed.length > 0) out.vary = 'Origin';
    return out;
  }
  if (preflight) {
    out['access-control-allow-methods'] = CORS_METHODS;
    out['access-control-allow-headers'] = CORS_HEADERS;
    out['access-control-max-age'] = '600';
  }
  return out;
}
