/* A stand-in for Windows' bcryptprimitives.dll, which Debian's Wine 8 lacks:
   Go >= 1.22 binaries call ProcessPrng at start. It forwards to RtlGenRandom
   (advapi32's SystemFunction036). Test setup only; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
