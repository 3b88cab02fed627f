import type { KObject } from '../../api/meta.js';
import { findResource } from '../../api/resources.js';
import { buildSelection } from '../registry/generic/selection.js';
import type { Strategy } from '../registry/generic/strategy.js';
import type { StoreEvent } from '../storage/store.js';
import { selectEvent } from './watch-filter.js';

const info = findResource('', 'v1', 'configmaps')!;
const strategy: Strategy = { info, allowCreateOnUpdate: false, allowUnconditionalUpdate: true };
const cm = (app: string, rv: number): KObject => ({ kind: 'ConfigMap', metadata: { name: 'c', namespace: 'd', labels: { app }, resourceVersion: String(rv) } });
const ev = (type: StoreEvent['type'], object: KObject, prevObject?: KObject): StoreEvent => ({ type, key: '/k', object, prevObject, revision: 7 });

describe('selectEvent', () => {
  const web = buildSelection(strategy, 'app=web');
  const all = buildSelection(strategy);

  it('passes ADDED and DELETED of selected objects and drops the others', () => {
    expect(selectEvent(ev('ADDED', cm('web', 7)), web)).toEqual({ type: 'ADDED', object: cm('web', 7) });
    expect(selectEvent(ev('ADDED', cm('db', 7)), web)).toBeUndefined();
    expect(selectEvent(ev('DELETED', cm('web', 7)), web)).toEqual({ type: 'DELETED', object: cm('web', 7) });
    expect(selectEvent(ev('DELETED', cm('db', 7)), web)).toBeUndefined();
  });

  it('turns a MODIFIED into ADDED when the object enters the selection', () => {
    expect(selectEvent(ev('MODIFIED', cm('web', 7), cm('db', 6)), web)).toEqual({ type: 'ADDED', object: cm('web', 7) });
  });

  it('turns a MODIFIED into DELETED of the last selected state, at the revision it left', () => {
    expect(selectEvent(ev('MODIFIED', cm('db', 7), cm('web', 6)), web)).toEqual({ type: 'DELETED', object: cm('web', 7) });
  });

  it('keeps MODIFIED inside the selection and drops it outside', () => {
    expect(selectEvent(ev('MODIFIED', cm('web', 7), cm('web', 6)), web)?.type).toBe('MODIFIED');
    expect(selectEvent(ev('MODIFIED', cm('db', 7), cm('db', 6)), web)).toBeUndefined();
    // Without a selector every change is a MODIFIED, even one without a previous state.
    expect(selectEvent(ev('MODIFIED', cm('db', 7)), all)?.type).toBe('MODIFIED');
  });
});
