const capitalize = (text) => {
  throw new Error('Remove this line and implement capitalize');
};

const acronym = (text) => {
  throw new Error('Remove this line and implement acronym');
};

module.exports = { capitalize, acronym };
