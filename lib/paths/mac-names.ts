// Names as macOS's file systems take them: HFS+ leaves some characters out of
// names (so `.g\u200cit` is `.git` there, as git's own check lists them), and
// both HFS+ and APFS treat canonically equivalent spellings as one name (a
// KELVIN SIGN is a K, `cafe\u0301` is `caf\u00e9`).

/** The characters HFS+ ignores in names. */
export const HFS_IGNORED_CLASS = '\\u200c-\\u200f\\u202a-\\u202e\\u206a-\\u206f\\ufeff';
export const HFS_IGNORED = new RegExp(`[${HFS_IGNORED_CLASS}]`, 'g');

/** A name as it is on macOS's disk: HFS+'s ignored characters dropped, canonically composed. */
export const onDisk = (name: string): string => name.replace(HFS_IGNORED, '').normalize('NFC');

/** The same, case folded: two names equal so are one file there. */
export const foldedOnDisk = (name: string): string => onDisk(name).toLowerCase();
