/**
 * Static bearer tokens in kube-apiserver's `--token-auth-file` format: CSV rows of
 * `token,user,uid[,"group1,group2"]`. Audience-agnostic, so it is wrapped by the token union.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import type { UserInfo } from '../../api/meta.js';
import type { AudienceAgnosticTokenAuthenticator } from './token-union.js';

/** RFC 4180 fields of one line: commas separate, double quotes quote, `""` is a literal quote. */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(cur);
      cur = '';
    } else cur += c;
  }
  if (quoted) throw new Error('token file has an unterminated quoted field');
  fields.push(cur);
  return fields;
}

interface Entry {
  digest: Buffer;
  user: UserInfo;
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Parses the file text; throws (at startup) on rows with fewer than three columns. */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const f = csvFields(line).map((s) => s.trim());
    if (f.length < 3) {
      throw new Error(`token file must have at least 3 columns (token, user name, user uid), found ${f.length} on line ${i + 1}`);
    }
    const [token = '', username = '', uid = ''] = f;
    if (token === '') return; // upstream skips rows with an empty token
    const groups = (f[3] ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
    users.set(token, { username, uid, groups });
  });
  return users;
}

export function createTokenFileAuthenticator(text: string): AudienceAgnosticTokenAuthenticator {
  // Compare digests in constant time rather than indexing a map by the secret itself.
  const entries: Entry[] = [...parseTokenFile(text)].map(([token, user]) => ({ digest: digest(token), user }));
  return {
    authenticateToken(token) {
      const d = digest(token);
      let found: UserInfo | undefined;
      for (const e of entries) if (timingSafeEqual(e.digest, d)) found = e.user;
      return found ? { ...found, groups: [...found.groups] } : undefined;
    },
  };
}
