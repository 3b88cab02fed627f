/**
 * Field validation errors (apimachinery's field.Error): a path, a type and a detail, rendered in
 * Kubernetes' exact text so clients that match on messages keep working.
 */

export type FieldErrorType =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueNotFound'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** Absent for types that print no value (Required, Forbidden, TooLong, TooMany, Internal). */
  value?: unknown;
  detail: string;
}

/** A value whose Go rendering differs from its JSON one (e.g. `[]byte{0x2d, ...}`); printed as is. */
export interface GoSyntax {
  goSyntax: string;
}

/** field.OmitValueType: an Invalid (or other valued) error that prints no value at all. */
export const OMIT_VALUE: unique symbol = Symbol('omit value');

function isGoSyntax(value: unknown): value is GoSyntax {
  return typeof value === 'object' && value !== null && typeof (value as GoSyntax).goSyntax === 'string';
}

/** Go's `%q`/`%v` rendering of a value, as field.Error prints it. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // Go prints slices as `[]string{"a", "b"}`; every slice we validate is of strings.
  if (Array.isArray(value)) return `[]string{${value.map(formatValue).join(', ')}}`;
  if (isGoSyntax(value)) return value.goSyntax;
  return JSON.stringify(value);
}

/** The message body after the field path (field.Error.ErrorBody). */
export function errorBody(e: FieldError): string {
  const withDetail = (s: string): string => (e.detail ? `${s}: ${e.detail}` : s);
  if (e.value === OMIT_VALUE) return withDetail(TYPE_TEXT[e.type]);
  switch (e.type) {
    case 'FieldValueRequired':
      return withDetail('Required value');
    case 'FieldValueForbidden':
      return withDetail('Forbidden');
    case 'FieldValueTooLong':
      return withDetail('Too long');
    case 'FieldValueTooMany':
      return withDetail('Too many');
    case 'InternalError':
      return withDetail('Internal error');
    case 'FieldValueDuplicate':
      return withDetail(`Duplicate value: ${formatValue(e.value)}`);
    case 'FieldValueNotFound':
      return withDetail(`Not found: ${formatValue(e.value)}`);
    case 'FieldValueNotSupported':
      return withDetail(`Unsupported value: ${formatValue(e.value)}`);
    case 'FieldValueTypeInvalid':
      return withDetail(`Invalid value: ${formatValue(e.value)}`);
    case 'FieldValueInvalid':
      return withDetail(`Invalid value: ${formatValue(e.value)}`);
  }
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueNotFound: 'Not found',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

/** `field: body`, the text of one error inside an Invalid message. */
export function fieldErrorString(e: FieldError): string {
  return e.field ? `${e.field}: ${errorBody(e)}` : errorBody(e);
}

export const required = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail });
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, detail });
export const invalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  value,
  detail,
});
export const duplicate = (field: string, value: unknown): FieldError => ({
  type: 'FieldValueDuplicate',
  field,
  value,
  detail: '',
});
export const notSupported = (field: string, value: unknown, supported: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : '',
});
export const tooLong = (field: string, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field,
  detail: `may not be more than ${max} bytes`,
});
export const typeInvalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueTypeInvalid',
  field,
  value,
  detail,
});
