import type { KObject } from '../../../api/meta.js';
import { type FieldError, fieldErrorString } from '../../http/field-errors.js';
import { b64, certificatePem, cond, csrPem, csrSubresource, ctx, storedCsr, type CsrFields } from '../../../../test/csr/helpers.js';

const approval = csrSubresource('approval');
const statusSub = csrSubresource('status');

let PEM: string;
beforeAll(async () => {
  PEM = await csrPem();
});

const texts = (errs: FieldError[]): string[] => errs.map(fieldErrorString);
const clone = <T>(v: T): T => structuredClone(v);

const stored = (status: Record<string, unknown> = {}, fields: CsrFields = {}): KObject => storedCsr(PEM, status, fields);

function viaApproval(old: KObject, conditions: unknown[], mutate: (o: KObject) => void = () => {}): FieldError[] {
  const next = clone(old);
  next.status = { ...(next.status as object), conditions };
  mutate(next);
  approval?.prepareForUpdate(next, old, ctx());
  return approval?.validateUpdate(next, old, ctx()) ?? [];
}

describe('approval subresource', () => {
  const now = '2024-05-01T10:00:00Z';

  it('takes only conditions, stamping missing times with now (seconds, UTC)', () => {
    const cert = b64('old cert');
    const old = stored({ certificate: cert });
    const next = clone(old);
    next.spec = { ...(next.spec as object), signerName: 'evil.io/x' };
    next.metadata = { ...next.metadata, annotations: { k: 'v' } };
    next.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove' }], certificate: b64('new') };
    approval.prepareForUpdate(next, old, ctx());
    expect(next.spec).toEqual(old.spec);
    expect(next.metadata?.annotations).toEqual({ k: 'v' });
    expect(next.status).toEqual({
      conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', lastUpdateTime: now, lastTransitionTime: now }],
      certificate: cert,
    });
  });

  // The decoder writes times in metav1.Time's form before the strategy runs (test/apiserver/time-fields.test.ts).
  it('keeps client timestamps and reuses the old transition time for the same type and status', () => {
    const old = stored({ conditions: [cond('Custom', { status: 'False', lastTransitionTime: '2020-01-01T00:00:00Z' })] });
    const next = clone(old);
    next.status = {
      conditions: [
        { type: 'Custom', status: 'False', lastUpdateTime: null, lastTransitionTime: null },
        { type: 'Approved', status: 'True', lastUpdateTime: '2024-01-02T02:04:05Z' },
      ],
    };
    approval.prepareForUpdate(next, old, ctx());
    expect((next.status as { conditions: unknown[] }).conditions).toEqual([
      { type: 'Custom', status: 'False', lastUpdateTime: now, lastTransitionTime: '2020-01-01T00:00:00Z' },
      { type: 'Approved', status: 'True', lastUpdateTime: '2024-01-02T02:04:05Z', lastTransitionTime: now },
    ]);
  });

  it('sets a fresh transition time when the status changes', () => {
    const old = stored({ conditions: [cond('Custom', { status: 'False' })] });
    const next = clone(old);
    next.status = { conditions: [{ type: 'Custom', status: 'True' }] };
    approval.prepareForUpdate(next, old, ctx());
    expect((next.status as { conditions: { lastTransitionTime: string }[] }).conditions[0]?.lastTransitionTime).toBe(now);
  });

  it('allows Approved, Denied, Failed and custom conditions', () => {
    expect(viaApproval(stored(), [cond('Approved')])).toEqual([]);
    expect(viaApproval(stored(), [cond('Denied')])).toEqual([]);
    expect(viaApproval(stored(), [cond('Approved'), cond('Failed'), cond('Custom', { status: 'Unknown' })])).toEqual([]);
  });

  it.each(['Approved', 'Denied', 'Failed'])('allows only True for %s', (type) => {
    expect(texts(viaApproval(stored(), [cond(type, { status: 'False' })]))).toEqual([
      'status.conditions[0].status: Unsupported value: "False": supported values: "True"',
    ]);
  });

  it('allows True, False, Unknown for other types', () => {
    expect(texts(viaApproval(stored(), [cond('Custom', { status: 'Maybe' })]))).toEqual([
      'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    ]);
  });

  it('requires type and status', () => {
    expect(texts(viaApproval(stored(), [{ type: '', status: '' }]))).toEqual([
      'status.conditions[0].type: Required value',
      'status.conditions[0].status: Required value',
    ]);
  });

  it('keeps Approved and Denied exclusive', () => {
    expect(texts(viaApproval(stored(), [cond('Approved'), cond('Denied')]))).toEqual([
      'status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    ]);
    const approved = stored({ conditions: [cond('Approved')] });
    expect(texts(viaApproval(approved, [cond('Denied'), cond('Approved')]))).toEqual([
      'status.conditions: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive',
    ]);
  });

  it('allows one condition per type', () => {
    expect(texts(viaApproval(stored(), [cond('Approved'), cond('Approved')]))).toEqual([
      'status.conditions[1].type: Duplicate value: "Approved"',
    ]);
    expect(texts(viaApproval(stored(), [cond('X'), cond('Y'), cond('X')]))).toEqual(['status.conditions[2].type: Duplicate value: "X"']);
  });

  it.each(['Approved', 'Denied', 'Failed'])('never removes %s', (type) => {
    const old = stored({ conditions: [cond(type), cond('Custom')] });
    expect(texts(viaApproval(old, [cond('Custom')]))).toEqual([`status.conditions: Forbidden: updates may not remove a condition of type "${type}"`]);
  });

  it('may remove and reorder custom conditions', () => {
    const old = stored({ conditions: [cond('Custom'), cond('Approved')] });
    expect(viaApproval(old, [cond('Approved')])).toEqual([]);
    expect(viaApproval(old, [cond('Approved'), cond('Custom')])).toEqual([]);
  });

  it('tolerates rules the stored object already broke', () => {
    const legacy = stored({ conditions: [cond('Approved'), cond('Denied'), cond('Approved'), cond('')] });
    expect(viaApproval(legacy, [cond('Approved'), cond('Denied'), cond('Approved'), cond(''), cond('Failed')])).toEqual([]);
  });
});

describe('status subresource', () => {
  function viaStatus(old: KObject, status: Record<string, unknown>): { next: KObject; errs: string[] } {
    const next = clone(old);
    next.status = status;
    statusSub.prepareForUpdate(next, old, ctx());
    return { next, errs: texts(statusSub.validateUpdate(next, old, ctx())) };
  }

  it('sets the certificate once; then it is immutable', async () => {
    const cert = await certificatePem();
    const old = stored({ conditions: [cond('Approved')] });
    const first = viaStatus(old, { conditions: [cond('Approved')], certificate: b64(cert) });
    expect(first.errs).toEqual([]);
    expect((first.next.status as { certificate: string }).certificate).toBe(b64(cert));

    const other = await certificatePem('other');
    expect(viaStatus(first.next, { conditions: [cond('Approved')], certificate: b64(other) }).errs).toEqual([
      'status.certificate: Forbidden: updates may not modify existing certificate content',
    ]);
    expect(viaStatus(first.next, { conditions: [cond('Approved')] }).errs).toEqual([
      'status.certificate: Forbidden: updates may not modify existing certificate content',
    ]);
    expect(viaStatus(first.next, { conditions: [cond('Approved')], certificate: b64(cert) }).errs).toEqual([]);
  });

  it('does not require approval before issuing', async () => {
    expect(viaStatus(stored(), { certificate: b64(await certificatePem()) }).errs).toEqual([]);
  });

  it('adds Failed but never removes it', () => {
    const old = stored({ conditions: [cond('Approved')] });
    const failed = viaStatus(old, { conditions: [cond('Approved'), cond('Failed', { reason: 'SignerValidationFailure' })] });
    expect(failed.errs).toEqual([]);
    expect(viaStatus(failed.next, { conditions: [cond('Approved')] }).errs).toEqual([
      'status.conditions: Forbidden: updates may not remove a condition of type "Failed"',
    ]);
  });

  it.each(['Approved', 'Denied'])('may not add or remove %s', (type) => {
    expect(viaStatus(stored(), { conditions: [cond(type)] }).errs).toEqual([
      `status.conditions: Forbidden: updates may not add a condition of type "${type}"`,
    ]);
    expect(viaStatus(stored({ conditions: [cond(type)] }), { conditions: [] }).errs).toEqual([
      `status.conditions: Forbidden: updates may not remove a condition of type "${type}"`,
    ]);
  });

  it('silently reverts edits of existing Approved conditions', () => {
    const old = stored({ conditions: [cond('Custom'), cond('Approved', { reason: 'AutoApproved' })] });
    const { next, errs } = viaStatus(old, { conditions: [cond('Approved', { reason: 'Changed', message: 'x' }), cond('Custom', { status: 'False' })] });
    expect(errs).toEqual([]);
    expect((next.status as { conditions: unknown[] }).conditions).toEqual([cond('Approved', { reason: 'AutoApproved' }), cond('Custom', { status: 'False', lastTransitionTime: '2024-04-01T00:00:00Z' })]);
    expect(next.spec).toEqual(old.spec);
  });

  describe('certificate content', () => {
    const invalidCert = async (text: string): Promise<string[]> => viaStatus(stored(), { certificate: b64(text) }).errs;
    const msg = (why: string): string[] => [`status.certificate: Invalid value: "<certificate data>": ${why}`];

    it('accepts a chain with text before, between and after the blocks', async () => {
      const [a, b] = [await certificatePem('leaf'), await certificatePem('intermediate')];
      expect(await invalidCert(`${a}${b}`)).toEqual([]);
      expect(await invalidCert(`Subject: leaf\n${a}between\n${b}trailing text\n`)).toEqual([]);
    });

    it('rejects other block types', async () => {
      const cert = await certificatePem();
      expect(await invalidCert(`${cert}-----BEGIN PRIVATE KEY-----\nAQID\n-----END PRIVATE KEY-----\n`)).toEqual(
        msg('only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"'),
      );
    });

    it('rejects PEM headers', async () => {
      const cert = await certificatePem();
      const withHeader = cert.replace('-----BEGIN CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n');
      expect(await invalidCert(withHeader)).toEqual(msg('no PEM block headers are permitted'));
    });

    it('rejects garbage DER, empty blocks and text without blocks', async () => {
      const garbage = await invalidCert('-----BEGIN CERTIFICATE-----\nAQIDBA==\n-----END CERTIFICATE-----\n');
      expect(garbage).toHaveLength(1);
      expect(garbage[0]).toMatch(/^status\.certificate: Invalid value: "<certificate data>": x509: /);
      expect(await invalidCert('-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n')).toEqual(
        msg('found CERTIFICATE PEM block containing 0 certificates'),
      );
      expect(await invalidCert('just text')).toEqual(msg('must contain at least one CERTIFICATE PEM block'));
    });
  });
});
