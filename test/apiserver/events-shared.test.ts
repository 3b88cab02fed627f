/**
 * core/v1 and events.k8s.io/v1 Events are one stored resource, as in kube-apiserver: what is written
 * through one group is read, listed, watched, updated, patched and deleted through the other, converted
 * (pkg/apis/events/v1 conversion), with events.k8s.io's stricter validation on its own writes
 * (pkg/apis/core/validation/events.go) and each group's own field selectors and RBAC resource.
 */
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { storageKey } from '../../src/apiserver/storage/store.js';

const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };

/** Protobuf wire format, just enough to send an Event as client-go's protobuf codec does. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  for (; n > 0x7f; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  return [...out, n];
};
const bytesField = (field: number, data: Buffer | string): Buffer => {
  const b = Buffer.from(data);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint(b.length)]), b]);
};
const message = (...fields: Buffer[]): Buffer => Buffer.concat(fields);

/** An events.k8s.io/v1 Event with every field a new Event may carry. */
const eventsV1 = (name: string): Record<string, unknown> => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, labels: { from: 'v1' } },
  eventTime: '2026-11-25T06:00:00.123456Z',
  series: { count: 2, lastObservedTime: '2026-11-25T06:01:00.000000Z' },
  reportingController: 'example.com/approver',
  reportingInstance: 'approver-0',
  action: 'Approve',
  reason: 'Approved',
  regarding: { kind: 'Pod', namespace: 'default', name: 'p1', uid: 'u1', apiVersion: 'v1', resourceVersion: '3', fieldPath: 'spec.containers{c}' },
  related: { kind: 'Node', name: 'n1', apiVersion: 'v1' },
  note: 'approved it',
  type: 'Normal',
});

/** A core/v1 Event as an old-style recorder writes it (source, counts, no eventTime). */
const coreEvent = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'p2', uid: 'u2' },
  reason: 'BackOff',
  message: 'Back-off restarting failed container',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2026-11-25T05:00:00Z',
  lastTimestamp: '2026-11-25T05:10:00Z',
  count: 7,
  type: 'Warning',
});

let s: TestServer;
beforeAll(async () => {
  // apiserver_storage_objects is polled: every 100 ms here.
  s = await startTestServer({ countMetricPollPeriodMs: 100 });
});
afterAll(async () => {
  await s.close();
});

describe('one Event, two groups', () => {
  it('reads an events.k8s.io/v1 Event through core/v1, converted field by field', async () => {
    const c = await raw(s, 'POST', V1, { body: eventsV1('from-v1') });
    expect(c.status).toBe(201);
    const core = await raw(s, 'GET', `${CORE}/from-v1`);
    expect(core.status).toBe(200);
    const { metadata, ...rest } = core.json;
    expect(rest).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      eventTime: '2026-11-25T06:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2026-11-25T06:01:00.000000Z' },
      reportingComponent: 'example.com/approver',
      reportingInstance: 'approver-0',
      action: 'Approve',
      reason: 'Approved',
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p1', uid: 'u1', apiVersion: 'v1', resourceVersion: '3', fieldPath: 'spec.containers{c}' },
      related: { kind: 'Node', name: 'n1', apiVersion: 'v1' },
      message: 'approved it',
      type: 'Normal',
    });
    expect(metadata).toMatchObject({ name: 'from-v1', namespace: 'default', uid: c.json.metadata.uid, resourceVersion: c.json.metadata.resourceVersion });
    // Stored once, as core/v1, where kube-apiserver keeps Events.
    const stored = await s.store.get(storageKey('', 'events', 'default', 'from-v1'));
    expect(stored?.object).toMatchObject({ apiVersion: 'v1', message: 'approved it' });
    expect(await s.store.get(storageKey('events.k8s.io', 'events', 'default', 'from-v1'))).toBeUndefined();
  });

  it('reads a core/v1 Event through events.k8s.io/v1 with the deprecated fields', async () => {
    const c = await raw(s, 'POST', CORE, { body: coreEvent('from-core') });
    expect(c.status).toBe(201);
    const v1 = await raw(s, 'GET', `${V1}/from-core`);
    expect(v1.status).toBe(200);
    const { metadata, ...rest } = v1.json;
    expect(rest).toEqual({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      regarding: { kind: 'Pod', namespace: 'default', name: 'p2', uid: 'u2' },
      reason: 'BackOff',
      note: 'Back-off restarting failed container',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2026-11-25T05:00:00Z',
      deprecatedLastTimestamp: '2026-11-25T05:10:00Z',
      deprecatedCount: 7,
      type: 'Warning',
    });
    expect(metadata.resourceVersion).toBe(c.json.metadata.resourceVersion);
  });

  it('takes an events.k8s.io/v1 Event in protobuf, read back through core/v1', async () => {
    // k8s.io/api events/v1 generated.proto field numbers; eventTime 2026-11-25T06:00:00.000001Z.
    const event = message(
      bytesField(1, message(bytesField(1, 'from-protobuf'))),
      bytesField(2, message(Buffer.from([0x08, ...varint(1795586400)]), Buffer.from([0x10, ...varint(1000)]))),
      bytesField(4, 'example.com/proto'),
      bytesField(5, 'proto-0'),
      bytesField(6, 'Encode'),
      bytesField(7, 'Encoded'),
      bytesField(8, message(bytesField(1, 'Pod'), bytesField(2, 'default'), bytesField(3, 'p9'))),
      bytesField(10, 'sent as protobuf'),
      bytesField(11, 'Normal'),
    );
    const envelope = message(Buffer.from('k8s\0', 'latin1'), bytesField(1, message(bytesField(1, 'events.k8s.io/v1'), bytesField(2, 'Event'))), bytesField(2, event));
    const c = await raw(s, 'POST', V1, { body: envelope, contentType: 'application/vnd.kubernetes.protobuf' });
    expect(c.status).toBe(201);
    const core = (await raw(s, 'GET', `${CORE}/from-protobuf`)).json;
    expect(core).toMatchObject({
      eventTime: '2026-11-25T06:00:00.000001Z',
      reportingComponent: 'example.com/proto',
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p9' },
      message: 'sent as protobuf',
    });
  });

  it('lists the same Events at the same resourceVersion through both groups', async () => {
    const [core, v1] = await Promise.all([raw(s, 'GET', CORE), raw(s, 'GET', V1)]);
    expect(v1.json.kind).toBe('EventList');
    expect(v1.json.apiVersion).toBe('events.k8s.io/v1');
    const names = (l: { items: { metadata: { name: string; resourceVersion: string } }[] }) => l.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`);
    expect(names(v1.json)).toEqual(names(core.json));
    expect(names(v1.json).length).toBeGreaterThanOrEqual(2);
    // Paginated through the other group, with its own continue token.
    const page = await raw(s, 'GET', `${V1}?limit=1`);
    expect(page.json.items).toHaveLength(1);
    const next = await raw(s, 'GET', `${V1}?limit=1&continue=${page.json.metadata.continue}`);
    expect(next.status).toBe(200);
    expect(next.json.items[0].metadata.name).not.toBe(page.json.items[0].metadata.name);
  });

  it('updates, patches and deletes through the group it was not created in', async () => {
    await raw(s, 'POST', V1, { body: eventsV1('rw') });
    // core/v1 keeps the legacy rules only: the note (message) may change there.
    const got = (await raw(s, 'GET', `${CORE}/rw`)).json;
    const put = await raw(s, 'PUT', `${CORE}/rw`, { body: { ...got, message: 'changed through core' } });
    expect(put.status).toBe(200);
    expect((await raw(s, 'GET', `${V1}/rw`)).json.note).toBe('changed through core');

    const merge = await raw(s, 'PATCH', `${V1}/rw`, { body: { metadata: { labels: { patched: 'v1' } } }, contentType: 'application/merge-patch+json' });
    expect(merge.status).toBe(200);
    expect(merge.json.metadata.labels).toEqual({ from: 'v1', patched: 'v1' });
    const strategic = await raw(s, 'PATCH', `${CORE}/rw`, { body: { series: { count: 5 } }, contentType: 'application/strategic-merge-patch+json' });
    expect(strategic.status).toBe(200);
    expect((await raw(s, 'GET', `${V1}/rw`)).json.series).toEqual({ count: 5, lastObservedTime: '2026-11-25T06:01:00.000000Z' });
    const apply = await raw(s, 'PATCH', `${V1}/rw?fieldManager=tester&force=true`, {
      body: { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'rw', annotations: { applied: 'yes' } } },
      contentType: 'application/apply-patch+yaml',
    });
    expect(apply.status).toBe(200);
    expect((await raw(s, 'GET', `${CORE}/rw`)).json.metadata.annotations).toEqual({ applied: 'yes' });

    const del = await raw(s, 'DELETE', `${CORE}/rw`);
    expect(del.status).toBe(200);
    expect((await raw(s, 'GET', `${V1}/rw`)).status).toBe(404);
    expect((await raw(s, 'DELETE', `${V1}/rw`)).status).toBe(404);
  });

  it('creates on PUT through either group (Events allow create on update)', async () => {
    const put = await raw(s, 'PUT', `${V1}/put-created`, { body: eventsV1('put-created') });
    expect(put.status).toBe(201);
    expect((await raw(s, 'GET', `${CORE}/put-created`)).json.reportingComponent).toBe('example.com/approver');
    expect((await raw(s, 'POST', CORE, { body: coreEvent('put-created') })).status).toBe(409);
  });

  it("detects server-side apply conflicts between managers of different groups", async () => {
    const mine = { ...eventsV1('applied'), metadata: { name: 'applied' } };
    const a = await raw(s, 'PATCH', `${V1}/applied?fieldManager=mgr-v1`, { body: mine, contentType: 'application/apply-patch+yaml' });
    expect(a.status).toBe(201);
    const owned = (await raw(s, 'GET', `${CORE}/applied`)).json.metadata.managedFields;
    expect(owned).toHaveLength(1);
    expect(owned[0].fieldsV1).toHaveProperty(['f:message']);
    const theirs = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'applied' }, message: 'taken over' };
    const b = await raw(s, 'PATCH', `${CORE}/applied?fieldManager=mgr-core`, { body: theirs, contentType: 'application/apply-patch+yaml' });
    expect(b.status).toBe(409);
    expect(b.json.message).toContain('conflict with "mgr-v1"');
    expect(b.json.message).toContain('.message');
    const forced = await raw(s, 'PATCH', `${CORE}/applied?fieldManager=mgr-core&force=true`, { body: theirs, contentType: 'application/apply-patch+yaml' });
    expect(forced.status).toBe(200);
    const v1 = (await raw(s, 'GET', `${V1}/applied`)).json;
    expect(v1.note).toBe('taken over');
    const byManager = Object.fromEntries(v1.metadata.managedFields.map((e: { manager: string; fieldsV1: object }) => [e.manager, Object.keys(e.fieldsV1)]));
    expect(byManager['mgr-core']).toEqual(['f:note']);
    expect(byManager['mgr-v1']).not.toContain('f:note');
  });

  it('sends one store write to watchers of both groups, each in its own version', async () => {
    const rv = (await raw(s, 'GET', CORE)).json.metadata.resourceVersion;
    const q = `?watch=1&fieldSelector=metadata.name=watched&resourceVersion=${rv}`;
    const [wCore, wV1] = await Promise.all([openWatch(s, CORE + q), openWatch(s, V1 + q)]);
    try {
      await raw(s, 'POST', CORE, { body: coreEvent('watched') });
      await raw(s, 'PATCH', `${V1}/watched`, { body: { metadata: { labels: { seen: 'yes' } } }, contentType: 'application/merge-patch+json' });
      await raw(s, 'DELETE', `${V1}/watched`);
      const [core, v1] = await Promise.all([wCore.waitFor(3), wV1.waitFor(3)]);
      const shape = (evs: { type: string; object: { apiVersion: string; metadata: { resourceVersion: string } } }[]) =>
        evs.map((e) => [e.type, e.object.metadata.resourceVersion]);
      expect(shape(v1)).toEqual(shape(core));
      expect(core.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      expect(core.every((e) => e.object.apiVersion === 'v1' && e.object.message === 'Back-off restarting failed container')).toBe(true);
      expect(v1.every((e) => e.object.apiVersion === 'events.k8s.io/v1' && e.object.note === 'Back-off restarting failed container')).toBe(true);
    } finally {
      wCore.close();
      wV1.close();
    }
  });
});

describe('field selectors', () => {
  beforeAll(async () => {
    await raw(s, 'POST', V1, { body: { ...eventsV1('sel-v1'), regarding: { kind: 'Node', name: 'sel-node' } } });
    await raw(s, 'POST', CORE, { body: { ...coreEvent('sel-core'), involvedObject: { kind: 'Pod', namespace: 'default', name: 'sel-pod' } } });
  });
  const names = async (path: string): Promise<string[]> => {
    const r = await raw(s, 'GET', path);
    expect(r.status).toBe(200);
    return r.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
  };

  it('takes the core/v1 labels on core/v1, whichever group wrote the Event', async () => {
    expect(await names(`${CORE}?fieldSelector=involvedObject.name=sel-node`)).toEqual(['sel-v1']);
    expect(await names(`${CORE}?fieldSelector=involvedObject.kind=Pod,involvedObject.name=sel-pod`)).toEqual(['sel-core']);
    expect(await names(`${CORE}?fieldSelector=reportingComponent=example.com/approver,involvedObject.name=sel-node`)).toEqual(['sel-v1']);
    // `source` falls back to the reporting controller (upstream ToSelectableFields).
    expect(await names(`${CORE}?fieldSelector=source=example.com/approver,reason=Approved,involvedObject.name=sel-node`)).toEqual(['sel-v1']);
    expect(await names(`${CORE}?fieldSelector=source=kubelet,involvedObject.name=sel-pod`)).toEqual(['sel-core']);
    const bad = await raw(s, 'GET', `${CORE}?fieldSelector=regarding.name=sel-node`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('field label not supported: regarding.name');
  });

  it("takes events.k8s.io's labels (AddFieldLabelConversionsForEvent) on events.k8s.io/v1", async () => {
    expect(await names(`${V1}?fieldSelector=regarding.name=sel-pod`)).toEqual(['sel-core']);
    expect(await names(`${V1}?fieldSelector=regarding.kind=Node,regarding.name=sel-node`)).toEqual(['sel-v1']);
    expect(await names(`${V1}?fieldSelector=reportingController=example.com/approver,regarding.name=sel-node`)).toEqual(['sel-v1']);
    expect(await names(`${V1}?fieldSelector=source=kubelet,type=Warning,regarding.name=sel-pod`)).toEqual(['sel-core']);
    for (const label of ['involvedObject.name', 'reportingComponent', 'note']) {
      const bad = await raw(s, 'GET', `${V1}?fieldSelector=${label}=x`);
      expect(bad.status).toBe(400);
      expect(bad.json.message).toContain(`field label not supported: ${label}`);
    }
  });
});

describe('validation (pkg/apis/core/validation/events.go)', () => {
  const message = (r: { json: { message: string } }): string => r.json.message.replace(/^.*? is invalid: /, '');

  it('applies the strict rules to creates through events.k8s.io/v1 only', async () => {
    const bad: Record<string, unknown> = { ...eventsV1('strict'), type: 'Fatal', deprecatedCount: 3, deprecatedSource: { component: 'c' }, deprecatedFirstTimestamp: '2026-11-25T05:00:00Z' };
    delete bad.eventTime;
    const r = await raw(s, 'POST', V1, { body: bad });
    expect(r.status).toBe(422);
    // Upstream names the internal type's kind, the core Event, whichever group served the request.
    expect(r.json.message).toMatch(/^Event "strict" is invalid: /);
    expect(r.json.details).toMatchObject({ name: 'strict', kind: 'Event' });
    expect(r.json.details.group ?? '').toBe('');
    expect(message(r)).toBe(
      '[eventTime: Required value, type: Invalid value: "": has invalid value: Fatal, firstTimestamp: Invalid value: "": needs to be unset, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]',
    );
    // The same Event through core/v1 passes: old clients keep working.
    const core = await raw(s, 'POST', CORE, { body: { ...coreEvent('strict'), type: 'Fatal' } });
    expect(core.status).toBe(201);
  });

  it('requires the reporting fields of any Event with an eventTime, through either group', async () => {
    const body: Record<string, unknown> = { ...eventsV1('reporting'), reportingController: 'Not Qualified!', action: 'x'.repeat(129) };
    delete body.reportingInstance;
    const r = await raw(s, 'POST', V1, { body });
    expect(r.status).toBe(422);
    expect(message(r)).toBe(
      '[reportingController: Invalid value: "Not Qualified!": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\'), reportingInstance: Required value, action: Invalid value: "": can have at most 128 characters]',
    );
    const core = { ...coreEvent('reporting-core'), eventTime: '2026-11-25T06:00:00.000000Z' };
    const c = await raw(s, 'POST', CORE, { body: core });
    expect(c.status).toBe(422);
    // Through core/v1 the field is named as core/v1 spells it.
    expect(message(c)).toBe('[reportingComponent: Required value, reportingComponent: Invalid value: "": name part must be non-empty, reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character (e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\'), reportingInstance: Required value, action: Required value]');
  });

  it('checks that an old-style Event names its object in its own namespace', async () => {
    const r = await raw(s, 'POST', CORE, { body: { ...coreEvent('elsewhere'), involvedObject: { kind: 'Pod', namespace: 'kube-system', name: 'p' } } });
    expect(r.status).toBe(422);
    expect(message(r)).toBe('involvedObject.namespace: Invalid value: "kube-system": does not match event.namespace');
  });

  it('takes names the generic way on core/v1 and as DNS subdomains on events.k8s.io/v1 creates', async () => {
    expect((await raw(s, 'POST', CORE, { body: coreEvent('Upper_Case') })).status).toBe(201);
    const r = await raw(s, 'POST', V1, { body: eventsV1('Upper_Case2') });
    expect(r.status).toBe(422);
    expect(message(r)).toMatch(/^metadata.name: Invalid value: "Upper_Case2": a lowercase RFC 1123 subdomain/);
    // ...but an existing Event keeps its name when updated through events.k8s.io/v1.
    const patched = await raw(s, 'PATCH', `${V1}/Upper_Case`, { body: { metadata: { labels: { ok: 'yes' } } }, contentType: 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
  });

  it('keeps an Event immutable through events.k8s.io/v1 updates, but not through core/v1', async () => {
    await raw(s, 'POST', V1, { body: eventsV1('immutable') });
    const cur = (await raw(s, 'GET', `${V1}/immutable`)).json;
    const r = await raw(s, 'PUT', `${V1}/immutable`, {
      body: { ...cur, note: 'rewritten', reason: 'Other', regarding: { kind: 'Pod', name: 'other' }, eventTime: '2026-11-25T07:00:00.000001Z' },
    });
    expect(r.status).toBe(422);
    expect(message(r)).toBe(
      '[involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"", Name:"other", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable, ' +
        'reason: Invalid value: "Other": field is immutable, message: Invalid value: "rewritten": field is immutable, ' +
        'eventTime: Invalid value: 2026-11-25 07:00:00.000001 +0000 UTC: field is immutable]',
    );
    const series = await raw(s, 'PUT', `${V1}/immutable`, { body: { ...cur, series: { count: 1, lastObservedTime: null } } });
    expect(message(series)).toBe('[series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value]');
    const grown = await raw(s, 'PUT', `${V1}/immutable`, { body: { ...cur, series: { count: 3, lastObservedTime: '2026-11-25T06:02:00.000000Z' } } });
    expect(grown.status).toBe(200);
    const viaCore = (await raw(s, 'GET', `${CORE}/immutable`)).json;
    expect((await raw(s, 'PUT', `${CORE}/immutable`, { body: { ...viaCore, reason: 'Other' } })).status).toBe(200);
  });
});

describe('kubectl-facing output', () => {
  it('prints the same Event table through both groups', async () => {
    await raw(s, 'POST', V1, { body: eventsV1('table') });
    const [core, v1] = await Promise.all([raw(s, 'GET', `${CORE}/table`, { headers: TABLE }), raw(s, 'GET', `${V1}/table`, { headers: TABLE })]);
    expect(v1.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(core.json.columnDefinitions.map((c: { name: string }) => c.name));
    expect(v1.json.rows[0].cells).toEqual(core.json.rows[0].cells);
    // Source prints the reporting controller and instance, Count the series' count.
    expect(core.json.rows[0].cells.slice(1, 9)).toEqual(['Normal', 'Approved', 'pod/p1', 'spec.containers{c}', 'example.com/approver, approver-0', 'approved it', expect.any(String), 2]);
  });
});

describe('apiserver_storage_objects', () => {
  it('counts the one set of Events for both resources', async () => {
    const listed = (await raw(s, 'GET', '/api/v1/events')).json.items.length;
    expect(listed).toBeGreaterThan(5);
    const counts = async (): Promise<number[]> => {
      const text = (await raw(s, 'GET', '/metrics')).text;
      const count = (resource: string): number => {
        const line = text.split('\n').find((l) => l.startsWith(`apiserver_storage_objects{resource="${resource}"}`));
        return Number(line?.split(' ').pop());
      };
      return [count('events'), count('events.events.k8s.io')];
    };
    // Once a poll has run after the suite's last write.
    await until('the Events counted', async () => (await counts())[0] === listed);
    expect(await counts()).toEqual([listed, listed]);
  });
});

describe('continue tokens', () => {
  it.each([
    ['garbage', "invalid character '\\u0081' looking for beginning of value"],
    ['x', 'illegal base64 data at input byte 0'],
    ['eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJhIn0', 'incorrect encoded start resourceVersion (version meta.k8s.io/v1)'],
  ])('answers 400 for %s in upstream words', async (token, why) => {
    const r = await raw(s, 'GET', `${V1}?limit=1&continue=${token}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: `invalid continue token: continue key is not valid: ${why}` });
  });
});
