// A small function with a missing edge case, for the agent to find.
function greet(name) {
  return `Hello, ${name}!`;
}

module.exports = { greet };
