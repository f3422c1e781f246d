/* xml.h — text written into XML (the SVG files of `gyro plot` and the metrics report).
 */
#ifndef GYRO_TEXT_XML_H
#define GYRO_TEXT_XML_H

#include <stdio.h>

/* Write the NUL-terminated string s to f as XML character data or an attribute value: '<', '>',
 * '&' and '"' as entity references, control characters below U+0020 (which XML 1.0 does not
 * allow, or would fold) left out, every other byte as it is. Write errors are left in f's
 * error indicator for the caller to check. */
void gyro_xml_escape(FILE *f, const char *s);

#endif
