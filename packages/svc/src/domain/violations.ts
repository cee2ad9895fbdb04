// One shape for every validation failure in the product (spec "Errors": property_path, message, code).
export interface Violation {
  property_path: string;
  message: string;
  code: string;
}

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** The namespace rule shared by every resource that names one: 2-63 chars, lowercase DNS label. */
export function checkNamespace(value: string, path: string, area: string, out: Violation[]): void {
  if (value.length < 2 || value.length > 63) {
    out.push({ property_path: path, message: 'must be 2-63 characters', code: `${area}.length` });
  }
  checkDnsLabel(value, path, `${area}.format`, out);
}

/** Format rule of namespaces and deployment names: a lowercase DNS label. */
export function checkDnsLabel(value: string, path: string, code: string, out: Violation[]): void {
  if (!DNS_LABEL.test(value)) {
    out.push({
      property_path: path,
      message: 'must be a lowercase DNS label (a-z, 0-9 and -, no leading or trailing dash)',
      code,
    });
  }
}

/** Length rule counted in characters (code points), as a user would count them. */
export function checkLength(value: string, min: number, max: number, path: string, code: string, out: Violation[]): void {
  const length = [...value].length;
  if (length < min || length > max) {
    out.push({ property_path: path, message: `must be ${min}-${max} characters`, code });
  }
}
