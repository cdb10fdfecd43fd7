import { z } from 'zod';
import { defineAction } from '../action';
import { storeReturnedToken, tokenResult } from '../../domain/accounts/tokens';

const refreshTokenRequest = z.object({
  refresh_token: z.string().trim().min(1).max(4096),
  stay_logged_in: z.boolean().nullish(),
});

const refreshTokenResponse = z.object({
  access_token: z.string().nullable(),
  token_type: z.string(),
  refresh_token: z.string().nullable(),
  expires_in: z.number().nullable(),
  email_confirmation_required: z.boolean(),
});

/** OAuth refresh; no proof needed (the refresh token is one). `invalid_token` when the provider refuses it. */
export const refreshToken = defineAction({
  name: 'refresh_token',
  summary: 'OAuth refresh (grant_type refresh_token); updates cookie __utp when a new access token comes back.',
  request: refreshTokenRequest,
  response: refreshTokenResponse,
  reasons: ['invalid_token'],
  async handler(input, ctx) {
    const reply = await ctx.deps.identity.refreshToken(ctx, input.refresh_token);
    storeReturnedToken(ctx, reply, input.stay_logged_in ?? true);
    return { data: tokenResult(reply) };
  },
});
