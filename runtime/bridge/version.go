package bridge

// SkelgenV0_1_0_dev is declared by the runtime of skelgen v0.1.0-dev alone.
// A skeleton that imports skelgen's runtime from another module (-runtime
// import, or auto where go.mod requires skelgen) names the constant of the
// skelgen that wrote it, so that it compiles only against that release's
// runtime: the generated code and the runtime change together.
const SkelgenV0_1_0_dev = true
