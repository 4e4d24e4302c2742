const { capitalize, acronym } = require('./word_caps');

describe('capitalize', () => {
  test('one word', () => {
    expect(capitalize('hello')).toBe('Hello');
  });

  xtest('mixed case and several spaces', () => {
    expect(capitalize('hELLO  wORLD')).toBe('Hello  World');
  });
});

describe('acronym', () => {
  xtest('words and hyphens', () => {
    expect(acronym('Portable Network-graphics')).toBe('PNG');
  });

  xtest('an empty text', () => {
    expect(acronym('')).toBe('');
  });
});
