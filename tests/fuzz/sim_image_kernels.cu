__device__ __noinline__ float helper(float x){ return x*x+1; }
__constant__ float ctab[64];
__global__ void __launch_bounds__(256) kern_a(float *p, int n){ __shared__ float s[300]; int i=threadIdx.x; s[i%300]=p[i]; __syncthreads(); if(i<n) p[i]=helper(s[(i+1)%300])+ctab[i%64]; }
template<typename T> __global__ void kern_b(T *p){ extern __shared__ T d[]; d[threadIdx.x]=p[threadIdx.x]; p[0]=d[1]; }
template __global__ void kern_b<double>(double*);
