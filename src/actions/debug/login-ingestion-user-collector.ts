import { z } from 'zod';
import { requireUserToken } from '../user-token';
import { apiError, withDetails, isApiError } from '../../core/errors';
import { maskSecret } from '../../core/logger';
import { defineAction } from '../action';
import { requireDiagnosticsAccess, safeUrl } from './diagnostics';

const loginIngestionRequest = z.looseObject({
  uid: z.string().trim().min(1).max(256),
  accessToken: z.string().trim().max(8192).nullish(),
  /** Alias of accessToken; the cookie `__utp` and a Bearer header are read after both. */
  access_token: z.string().trim().max(8192).nullish(),
});

/**
 * The contract's debug action (docs/contract.md#debug): forwards {uid, accessToken} to the user collector now (not through
 * the background queue) and answers the collector's outcome. Gated like the other diagnostics:
 * open, it would let anyone feed logins to the collector.
 */
export const loginIngestionUserCollector = defineAction({
  name: 'login-ingestion-user-collector',
  summary:
    'Debug: forwards {uid, accessToken} to the user collector and reports its answer (x-internal-key only, or in the sandbox).',
  request: loginIngestionRequest,
  reasons: ['proof_required', 'token_required', 'not_configured'],
  async handler(input, ctx) {
    requireDiagnosticsAccess(ctx);
    const { token, source } = requireUserToken(ctx, input.accessToken || input.access_token);
    const { collector } = ctx.deps;
    const payload = { uid: input.uid, accessToken: maskSecret(token) };
    const report = { url: safeUrl(collector.url), timeout_seconds: ctx.deps.config.user_collector.timeout };
    if (!collector.configured) {
      throw apiError('not_configured', {
        params: { key: 'user_collector.base_url' },
        data: { forwarded: false, collector: report },
        extra: { payload },
      });
    }
    const started = performance.now();
    try {
      const { status, durationMs } = await collector.ingestLogin(ctx, { uid: input.uid, accessToken: token });
      return {
        data: { forwarded: true, token_source: source, collector: { ...report, status, duration_ms: durationMs } },
        extra: { payload },
      };
    } catch (err) {
      if (!isApiError(err)) throw err;
      const status = typeof err.data.upstream_status === 'number' ? err.data.upstream_status : 0;
      const collectorOutcome = { ...report, status, duration_ms: Math.round(performance.now() - started) };
      throw withDetails(err, {
        data: { forwarded: false, token_source: source, collector: collectorOutcome },
        extra: { payload },
      });
    }
  },
});
