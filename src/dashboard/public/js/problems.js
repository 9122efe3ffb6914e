// A refused request's field problems (RFC 9457 `errors`, docs/conventions.md "Errors") as sentences about what the
// customer typed (issue 38 §2): the spec's FieldError names the schema keyword a value broke (`rule`) and its bound
// (`limit`), so the page words it itself, one sentence per field, instead of showing a schema's own text (a regular
// expression, "must NOT have fewer than 1 characters"). A problem the service found by rules of its own carries no
// `rule`; its `detail` says what is wrong there ("is not an IANA time zone name") and follows the field's name.

const WORDS = new WeakMap();

/** server_not_found in words: the API answers it alike for a deleted server and one no longer shared (gone.js). */
export const SERVER_GONE = 'This server is not shared with you (any more), or it was deleted.';

/**
 * What the page calls a control in its sentences (`label`, else its visible label), and the control's own words for
 * a rule, where the general ones would not say it best: sayAs(name, { label: 'Name', minLength: 'Give the server a
 * name.' }). Returns the control.
 */
export function sayAs(control, words) {
  WORDS.set(control, { ...WORDS.get(control), ...words });
  return control;
}

// Which of a field's problems to say when it has several: an empty name also breaks the name's pattern, but
// "give it a name" is the one thing to do.
const ORDER = ['required', 'type', 'minLength', 'minItems', 'maxLength', 'maxItems', 'minimum', 'exclusiveMinimum', 'maximum',
  'exclusiveMaximum', 'multipleOf', 'enum', 'const', 'format', 'pattern'];
const rank = (e) => (e.rule === undefined ? -1 : ORDER.includes(e.rule) ? ORDER.indexOf(e.rule) : ORDER.length);

/** The one sentence for a control's problems. */
export function fieldSentence(control, errors) {
  const own = WORDS.get(control) ?? {};
  const label = own.label ?? control.labels?.[0]?.textContent ?? control.name ?? 'This field';
  const e = [...errors].sort((a, b) => rank(a) - rank(b))[0];
  const emptied = e.rule === 'required' || (e.rule === 'minLength' && e.limit === 1);
  if (emptied && own.empty) return own.empty;
  if (e.rule && own[e.rule]) return own[e.rule];
  return sentence(label, e, { integer: control.type === 'number' && control.getAttribute('step') === '1', email: control.type === 'email' });
}

/** A sentence for one problem at a field called `label`; `kind` says what the field takes, where the rule is `type`. */
export function sentence(label, e, kind = {}) {
  const Name = label.charAt(0).toUpperCase() + label.slice(1);
  const n = e.limit;
  switch (e.rule) {
    case undefined: {
      const detail = e.detail.replace(/\.$/, '');
      return /^[a-z]/.test(detail) ? `${Name} ${detail}.` : `${detail}.`;
    }
    case 'required': return `${Name} is missing: fill it in.`;
    case 'minLength': return n === 1 ? `${Name} cannot be empty.` : `${Name} needs at least ${n} characters.`;
    case 'maxLength': return `${Name} can be at most ${n} characters long.`;
    case 'minItems': return `${Name} needs at least ${n}.`;
    case 'maxItems': return `${Name} can have at most ${n}.`;
    case 'minimum': return `${Name} must be ${n} or more.`;
    case 'exclusiveMinimum': return `${Name} must be more than ${n}.`;
    case 'maximum': return `${Name} must be ${n} or less.`;
    case 'exclusiveMaximum': return `${Name} must be less than ${n}.`;
    case 'type': return kind.integer ? `${Name} must be a whole number.` : `${Name} is not the kind of value it takes.`;
    case 'enum': case 'const': return `${Name} must be one of the choices offered.`;
    case 'format': return kind.email ? `${Name} must be an email address.` : `${Name} is not written the way it must be.`;
    case 'pattern': return `${Name} is not written the way it must be: it holds a character it cannot have here.`;
    default: return `${Name} is not a value it can take.`;
  }
}

/**
 * A refused request's problems in words, for a message that is not next to a field: one sentence per field, named
 * by the last part of its pointer ("/body/name": "name").
 */
export function problemSentences(errors) {
  const byPointer = new Map();
  for (const e of errors) byPointer.set(e.pointer, [...(byPointer.get(e.pointer) ?? []), e]);
  return [...byPointer].map(([pointer, errs]) => {
    const e = [...errs].sort((a, b) => rank(a) - rank(b))[0];
    const last = pointer.split('/').pop() || 'the request';
    return sentence(last.replace(/~1/g, '/').replace(/~0/g, '~').replace(/_/g, ' '), e);
  });
}

/** How many fields under `container` a refusal marked: one per field, however many rules its value broke. */
export function fieldsMarked(container) {
  return container.querySelectorAll('[aria-invalid="true"]').length;
}
