/**
 * The API machinery pieces the request pipeline uses (selectors, patch, metadata validation,
 * strict JSON, discovery, protobuf), gathered in one place so the core has a single call site
 * for each.
 */
export { parseLabelSelector } from './selectors/labels.js';
export { parseFieldSelector, objectFields } from './selectors/fields.js';
export { selectableFields } from './selectors/selectable-fields.js';
export { applyPatch, PATCH_TYPES } from './patch/index.js';
export { parseJsonStrict } from './validation/json-body.js';
export { validateLabelName, validatePathSegmentName, validateSubdomainName, generateName } from './validation/names.js';
export { validateObjectMeta, validateObjectMetaUpdate, validateFieldManager } from './validation/object-meta.js';
export { serveDiscovery } from './discovery/index.js';
export { decodeProtobufObject } from './codec/protobuf.js';
