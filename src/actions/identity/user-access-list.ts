import { z } from 'zod';
import { requireUserToken } from '../user-token';
import { defineAction } from '../action';

const userAccessListRequest = z.object({ access_token: z.string().trim().max(8192).nullish() });

const userAccessListResponse = z.object({
  count: z.number().int(),
  accesses: z.array(
    z.object({
      access_id: z.string(),
      resource: z.object({ rid: z.string().nullable(), name: z.string().nullable() }),
      granted: z.boolean(),
    }),
  ),
  raw: z.unknown().describe('the provider reply, as received'),
});

/** The user's accesses, with the user's own token (body, cookie `__utp`, Bearer header, in that order). */
export const userAccessList = defineAction({
  name: 'user_access_list',
  summary: 'Resources the user may access, with the user token from body, cookie __utp or Bearer header.',
  request: userAccessListRequest,
  response: userAccessListResponse,
  reasons: ['token_required', 'invalid_token'],
  async handler(input, ctx) {
    const { token } = requireUserToken(ctx, input.access_token);
    const reply = await ctx.deps.identity.accessList(ctx, token);
    const list = reply.data ?? reply.accesses ?? [];
    const accesses = list.map((a) => ({
      access_id: a.access_id,
      resource: { rid: a.resource?.rid ?? null, name: a.resource?.name ?? null },
      granted: a.granted ?? false,
    }));
    return { data: { count: accesses.length, accesses, raw: reply } };
  },
});
