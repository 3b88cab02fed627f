/**
 * A bare identity layer for tests of one server layer: fixed bearer tokens and allow-all (or a
 * test's own) authorization. The product wires the full chain from src/apiserver/auth.
 */
import { timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../../src/api/meta.js';
import type { Authenticator } from '../../src/apiserver/authentication/types.js';
import { errors } from '../../src/apiserver/http/errors.js';
import type { Authorizer } from '../../src/apiserver/authorization/authorizer.js';

export const ADMIN_USER: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

export function staticTokenAuthenticator(tokens: ReadonlyMap<string, UserInfo>): Authenticator {
  return {
    async authenticate(req) {
      const auth = req.headers.authorization;
      if (!auth) return undefined;
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      const given = Buffer.from(m?.[1] ?? '');
      for (const [token, user] of tokens) {
        const want = Buffer.from(token);
        if (given.length === want.length && timingSafeEqual(given, want)) return user;
      }
      throw errors.unauthorized();
    },
  };
}

export const allowAllAuthorizer: Authorizer = { authorize: async () => ({ allowed: true }) };
