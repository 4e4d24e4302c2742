const capitalize = (text) =>
  text
    .split(' ')
    .map((word) => (word ? word[0].toUpperCase() + word.slice(1).toLowerCase() : word))
    .join(' ');

const acronym = (text) =>
  text
    .split(/[\s-]+/)
    .filter((word) => word.length > 0)
    .map((word) => word[0].toUpperCase())
    .join('');

module.exports = { capitalize, acronym };
