/** What the controller's options accept as a signer name: `<fully qualified domain>/<path>`, as upstream's. */
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/[-._a-zA-Z0-9]+$/;

export const isSignerName = (name: string): boolean => SIGNER_NAME.test(name);
