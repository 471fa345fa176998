/* Included by consts.h. */
#define MORE \
	7
