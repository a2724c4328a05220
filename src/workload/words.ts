// Plain English words: one token each (with a leading space) in every common vocabulary, which lets the
// prompt builder count a prompt by counting its words once the tokenizer or server has confirmed it.
export const WORDS: readonly string[] = [
  ...new Set(
    (
      'the of and to in is was for on that with as by at from his her they this have are not but had which ' +
      'were all one their there been has more when will would who also into other after first over new some ' +
      'time could these two may then do any like about people than only its most years back through where ' +
      'much before good well way even because water long little world very still own see men work place made ' +
      'live just name great think say help low line turn cause same mean differ move right boy old ' +
      'too does tell sentence set three want air play small end put home read hand port large spell add land ' +
      'here must big high such follow act why ask change went light kind off need house picture try again ' +
      'animal point mother near build self earth father head stand page should country found answer school ' +
      'grow study learn plant cover food sun four between state keep eye never last let thought city tree cross ' +
      'farm hard start might story saw far sea draw left late run while press close night real life few north'
    ).split(' '),
  ),
];

/** Every built text starts with this word; its count also separates BOS-style special tokens. */
export const LEAD_WORD = 'the';
