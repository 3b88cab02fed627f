/**
 * The decoded bodies of a virtual create that only reads its body (TokenReview), remembered by the
 * body's bytes. Its callers send the same body again and again (a token is reviewed for as long as
 * it is used), and the decode is a function of the bytes, the Content-Type and whether unknown fields
 * are reported: a body seen before is answered with the same findings and one shared, frozen object,
 * without parsing or walking it again. Decoding errors are not remembered (each attempt fails afresh).
 * An entry is found by the body's last bytes (for a review, the end of the token's signature, which
 * is random), then the whole body is compared: a body differing in any byte is decoded afresh.
 * Only bodies up to `maxBytes` are kept, so what a caller can make the memo hold is bounded by count
 * times that size, not by the request body limit.
 */
import { BoundedMap } from '../../lib/bounded-map.js';
import { deepFreeze } from '../../lib/json.js';
import type { DecodedBody } from './negotiation.js';

/** Bytes of a body's end that find its entry. */
const TAIL = 48;

interface Entry {
  bytes: Buffer;
  contentType: string | undefined;
  unknownFields: boolean;
  decoded: DecodedBody;
}

export class DecodedBodies {
  private readonly byTail: BoundedMap<string, Entry>;

  constructor(
    limit: number,
    private readonly maxBytes: number,
  ) {
    this.byTail = new BoundedMap(limit);
  }

  get size(): number {
    return this.byTail.size;
  }

  /** `decode()`'s result for these bytes, decoded once; its object is frozen and shared by every caller. */
  decode(bytes: Buffer, contentType: string | undefined, unknownFields: boolean, decode: () => DecodedBody): DecodedBody {
    if (bytes.length > this.maxBytes) return decode();
    const tail = bytes.toString('latin1', Math.max(0, bytes.length - TAIL));
    const known = this.byTail.get(tail);
    if (known && known.contentType === contentType && known.unknownFields === unknownFields && known.bytes.equals(bytes)) return known.decoded;
    const decoded = decode();
    deepFreeze(decoded);
    // A copy of its own size: the request's buffer may be a slice of a larger one.
    const own = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(own);
    this.byTail.set(tail, { bytes: own, contentType, unknownFields, decoded });
    return decoded;
  }
}
