// The extensions of ops/matmul/cooperative.wgsl, its first prelude: WGSL wants `enable` before
// every declaration, and the kernel's other preludes come before its own text.
enable f16;
enable wgpu_cooperative_matrix;
