/*
 * Access tokens are JWTs issued by the identity provider. The service never trusts a token a
 * caller hands in; it only reads the claims of one the provider just returned to it (the
 * subject is the uid), so no signature check is needed here.
 */
function jwtClaims(token: string | null | undefined): Record<string, unknown> | undefined {
  const payload = token?.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The uid a provider-issued token belongs to (`sub`), when it says. */
export function jwtSubject(token: string | null | undefined): string | undefined {
  const sub = jwtClaims(token)?.sub;
  return typeof sub === 'string' && sub !== '' ? sub : undefined;
}
