// The body of a dashboard change: a form as browsers send it (application/x-www-form-urlencoded), the only
// body the dashboard reads (docs/dashboard.md#signing-in). Every field our pages send holds one value, so a
// field read is exactly one string: missing or sent more than once is a 400 in words, never a guess.
import { ServiceError } from '../errors.ts';

/** The largest form a dashboard page sends, with room to spare (a webhook URL is at most 2,048 characters). */
export const FORM_LIMIT_BYTES = 16 * 1024;

export class Form {
  private constructor(private readonly fields: ReadonlyMap<string, readonly string[]>) {}

  /** A form's fields from its urlencoded body, every value of each name kept in order. */
  static parse(body: string): Form {
    const fields = new Map<string, string[]>();
    for (const [name, value] of new URLSearchParams(body)) {
      const values = fields.get(name);
      if (values) values.push(value);
      else fields.set(name, [value]);
    }
    return new Form(fields);
  }

  /** A POST that came with no body at all. */
  static readonly EMPTY = new Form(new Map());

  /** The field's one value, or undefined when it is missing or was sent more than once. */
  only(name: string): string | undefined {
    const values = this.fields.get(name);
    return values?.length === 1 ? values[0] : undefined;
  }

  /** The field's one value; a field missing or sent more than once is refused in words (400). */
  one(name: string): string {
    const values = this.fields.get(name) ?? [];
    if (values.length === 0)
      throw new ServiceError('invalid_request', {
        message: `The form has no "${name}" field: send it from its page in the dashboard. Nothing was changed.`,
      });
    if (values.length > 1)
      throw new ServiceError('invalid_request', {
        message: `The form sent the field "${name}" more than once; it takes one value. Nothing was changed.`,
      });
    return values[0] as string;
  }
}
