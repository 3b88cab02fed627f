/**
 * The claims of tokens whose signature verified, by the token's whole text. A bound token is about
 * 1 KB and arrives as a new string with every request, and V8 hashes a Map's string key in full (0.7%
 * of a TokenReview's CPU): entries are found by the token's last characters, the end of its
 * signature, then the whole token is compared. Two tokens that share that end are two tokens: the
 * second one is a miss (verified afresh) and can never read or remove the first one's entry.
 */
import { BoundedMap } from '../../lib/bounded-map.js';
import type { ServiceAccountClaims } from './sa-token.js';

/** What the verifier needs of a memo (a plain Map by token text is one too). */
export interface TokenMemo {
  get(token: string): ServiceAccountClaims | undefined;
  set(token: string, claims: ServiceAccountClaims): unknown;
  delete(token: string): unknown;
}

/** Characters of a token's end that find its entry: any signature has more, and they are random. */
const TAIL = 32;

const tailOf = (token: string): string => (token.length > TAIL ? token.slice(-TAIL) : token);

export class VerifiedTokens implements TokenMemo {
  private readonly byTail: BoundedMap<string, { token: string; claims: ServiceAccountClaims }>;

  constructor(limit: number) {
    this.byTail = new BoundedMap(limit);
  }

  get size(): number {
    return this.byTail.size;
  }

  get(token: string): ServiceAccountClaims | undefined {
    const entry = this.byTail.get(tailOf(token));
    return entry?.token === token ? entry.claims : undefined;
  }

  set(token: string, claims: ServiceAccountClaims): void {
    this.byTail.set(tailOf(token), { token, claims });
  }

  delete(token: string): void {
    const tail = tailOf(token);
    if (this.byTail.get(tail)?.token === token) this.byTail.delete(tail);
  }
}
