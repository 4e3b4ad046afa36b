// libqrencode (Debian's libqrencode-dev): QR Code symbols (ISO/IEC 18004).
#include <qrencode.h>
